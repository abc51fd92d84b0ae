// Package ui is the hub's web console and tenant portal, served by the admin listener
// at /ui and embedded in the binary: server-rendered html/template pages, one small
// vendored client library (htmx, for the live panels) and two small scripts of our own
// (the live tail, the copy button). No build step: the files under static/ and
// templates/ are what the browser gets.
//
// Every page calls the same library functions as the admin API, through the admin
// server's shared operations (admin.ScopedTenant, admin.CheckOwner, admin.DLQ,
// AuditAction), with the request's principal: an operator's session (signed in with an
// admin token) or a tenant's signed link (the portal). Nothing is filtered in a
// template: every query is scoped before it runs.
package ui

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/schema"
)

//go:embed static templates
var files embed.FS

// Prefix is where the console is mounted.
const Prefix = "/ui"

// PortalPrefix is where the tenant portal is mounted.
const PortalPrefix = Prefix + "/portal"

// Config is what the console runs on.
type Config struct {
	// Admin is the API the console shares its operations, access and audit with.
	Admin *admin.Server
	// Hub feeds the live tail (in-process subscription: this replica's events).
	Hub *hub.Hub
	// Schemas is the catalogue the schema pages show and validate against.
	Schemas *schema.Registry
	// Gatherer is sampled for the overview's charts (this replica's counters).
	Gatherer prometheus.Gatherer
	// Guard is the request guard for the console: the admin listener's hosts and
	// origins, HTML form media types, cross-site navigations allowed (GET only).
	Guard *auth.Guard
	// UI is the admin.ui config section.
	UI config.UI
	// CSRFKey signs the portal's CSRF tokens; replicas sharing a secret key derive the
	// same one, so a form served by one is accepted by another. nil: random.
	CSRFKey []byte
	// Sessions keeps operator sessions where every replica sees them (the ledger's
	// auth_sessions table); nil keeps them in this process's memory.
	Sessions *auth.SessionStore
	// SampleEvery is the overview's sampling interval (default 10s: 360 samples an hour).
	SampleEvery time.Duration
	Logger      *slog.Logger
}

// Console serves /ui. Close stops its sampler and ends live tails.
type Console struct {
	cfg      Config
	log      *slog.Logger
	tmpl     *templates
	sessions *sessions
	csrfKey  []byte
	sampler  *sampler
	static   http.Handler
	console  http.Handler // operator pages, after the session check
	portal   http.Handler // tenant pages, after the link check

	tails chan struct{} // slots of concurrent live tails

	closeOnce sync.Once
	stop      context.CancelFunc
	ctx       context.Context
}

// New builds the console; Start begins sampling.
func New(cfg Config) (*Console, error) {
	if cfg.Admin == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "ui: no admin server")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = DefaultSampleEvery
	}
	if cfg.UI.SessionTTL == 0 {
		cfg.UI.SessionTTL = config.DefaultSessionTTL
	}
	if cfg.Guard == nil {
		g, err := auth.NewGuard(auth.GuardConfig{ContentTypes: FormTypes, AllowNavigation: true})
		if err != nil {
			return nil, err
		}
		cfg.Guard = g
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	key := cfg.CSRFKey
	if len(key) == 0 {
		key = randomBytes(32)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Console{cfg: cfg, log: cfg.Logger.With("component", "ui"), tmpl: t, sessions: newSessions(cfg.UI.SessionTTL, cfg.Sessions),
		csrfKey: key, ctx: ctx, stop: stop, tails: make(chan struct{}, MaxTails)}
	c.sampler = newSampler(c, cfg.SampleEvery)
	sub, _ := fs.Sub(files, "static")
	c.static = http.StripPrefix(Prefix+"/static/", staticHandler(sub))
	c.console = c.routes(consoleSite)
	c.portal = c.routes(portalSite)
	return c, nil
}

// FormTypes are the media types the console's writes carry (HTML forms).
var FormTypes = []string{"application/x-www-form-urlencoded", "multipart/form-data"}

// Start begins sampling the overview's metrics in the background.
func (c *Console) Start() { c.sampler.start(c.ctx) }

// Close stops the sampler and ends open live tails. Idempotent.
func (c *Console) Close() {
	c.closeOnce.Do(func() {
		c.stop()
		c.sampler.wait()
	})
}

// ServeHTTP runs the console's access layer (access.go), then the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	portal := r.URL.Path == PortalPrefix || strings.HasPrefix(r.URL.Path, PortalPrefix+"/")
	securityHeaders(w, portal, c.cfg.UI.FrameAncestors)
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.cfg.Guard.Check(r); err != nil {
			c.fail(w, r, nil, err)
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, Prefix+"/static/"):
			c.static.ServeHTTP(w, r)
		case r.URL.Path == Prefix+"/login":
			c.login(w, r)
		case r.URL.Path == Prefix+"/logout":
			c.logout(w, r)
		case portal:
			c.withLink(c.portal).ServeHTTP(w, r)
		default:
			c.withSession(c.console).ServeHTTP(w, r)
		}
	}))
	// A live tail holds its request for up to tailMaxAge: it takes a tail slot
	// (streams.go) instead of one of the listener's concurrency slots, which it would
	// otherwise keep from short requests.
	if lim := c.cfg.Admin.Concurrency; lim != nil && r.URL.Path != Prefix+"/streams/events" {
		h = lim.Middleware(h)
	}
	h.ServeHTTP(w, r)
}

var _ http.Handler = (*Console)(nil)
