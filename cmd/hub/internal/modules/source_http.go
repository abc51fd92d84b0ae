package modules

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/ingress"
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/hub"
)

func init() { registry.Register(new(HTTPSource)) }

// Defaults of source.http.
const (
	DefaultIngressListen = "127.0.0.1:8080"
	DefaultIngressPath   = "/events"
	DefaultReadTimeout   = 30 * time.Second
)

// readHeaderTimeout bounds reading a request's headers: a client that connects and
// sends nothing holds a connection this long at most (ReadTimeout covers the body).
const readHeaderTimeout = 10 * time.Second

// HTTPSource is the CloudEvents HTTP ingress (source.http).
type HTTPSource struct {
	// Listen is host:port. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// Path is the URL path events are POSTed to. Default /events.
	Path string `yaml:"path"`
	// MaxBodyBytes limits a request body (413 above it). Default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxBatch limits the events of one batch request (413 above it). Default 1000.
	MaxBatch int `yaml:"max_batch"`
	// ReadTimeout bounds reading one request, headers and body. Default 30s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// IngressAccess: auth, hosts, origins, rate_limit, max_concurrent,
	// max_header_bytes, tls (source_http_access.go).
	IngressAccess `yaml:",inline"`
	// Options: the dedupe window of event ids (R5) and the id rules (C1).
	ingress.Options `yaml:",inline"`

	srv    *http.Server
	done   chan struct{}
	logger *slog.Logger
	addr   string

	deduper      hub.EventDeduper // nil: no_dedupe
	closeDeduper func() error
	group        *ingress.Group // group commit, from Start to Close; nil: no_group_commit
	outboxOnly   bool           // every route is an outbox route (dedupe.Config.OutboxOnly)
}

// HubModule registers source.http.
func (*HTTPSource) HubModule() registry.Info {
	return registry.Info{ID: "source.http", New: func() registry.Module { return new(HTTPSource) },
		Doc: "CloudEvents HTTP ingress: POST binary, structured or batch events; 202 once published"}
}

// Provision applies defaults.
func (s *HTTPSource) Provision(pc *registry.ProvisionContext) error {
	if s.Listen == "" {
		s.Listen = DefaultIngressListen
	}
	if s.Path == "" {
		s.Path = DefaultIngressPath
	}
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = ingress.DefaultMaxBodyBytes
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = ingress.DefaultMaxBatch
	}
	if s.ReadTimeout == 0 {
		s.ReadTimeout = DefaultReadTimeout
	}
	s.Options.SetDefaults()
	s.outboxOnly = onlyOutboxRoutes(pc)
	s.logger = pc.Logger
	s.provision(pc)
	return nil
}

// Validate checks the fields.
func (s *HTTPSource) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		errs = append(errs, registry.Field("listen", "expected host:port, got %q", s.Listen))
	}
	if s.Path == "" || s.Path[0] != '/' {
		errs = append(errs, registry.Field("path", "must start with /"))
	}
	if s.MaxBodyBytes < 0 {
		errs = append(errs, registry.Field("max_body_bytes", "must not be negative"))
	}
	if s.MaxBatch < 0 {
		errs = append(errs, registry.Field("max_batch", "must not be negative"))
	}
	errs = append(errs, s.validate(s.Listen)...)
	errs = append(errs, s.validateOptions()...)
	return errors.Join(errs...)
}

// Handler returns the ingress handler on the runtime's hub (tests and benchmarks use it
// without a listener), behind acc when it is set.
func (s *HTTPSource) Handler(rt *registry.Runtime, acc *ingress.Access) http.Handler {
	h := &ingress.Handler{Publisher: rt.Publisher, MaxBodyBytes: s.MaxBodyBytes, MaxBatch: s.MaxBatch, Logger: rt.Logger,
		Deduper: s.deduper, DedupeWindow: s.DedupeWindow, RequireULIDIDs: s.RequireULIDIDs}
	if rt.Schemas != nil {
		h.Validator = rt.Schemas
	}
	h.Group = s.group // set by Start unless no_group_commit
	mux := http.NewServeMux()
	mux.Handle(s.Path, h)
	if acc == nil {
		return mux
	}
	h.Authorize = acc.Authorize
	return acc.Middleware(mux)
}

// Start opens the dedupe window, then listens and serves in the background, behind
// the access layer (credentials, guard, limits) and over TLS when configured.
func (s *HTTPSource) Start(ctx context.Context, rt *registry.Runtime) error {
	acc, err := s.build(ctx, rt, s.Listen)
	if err != nil {
		return fmt.Errorf("ingress: %w", err)
	}
	var tlsCfg *tls.Config
	if s.TLS.Enabled() {
		cr, err := auth.NewCertReloader(s.TLS.CertFile, s.TLS.KeyFile, s.TLS.ReloadInterval, rt.Logger)
		if err != nil {
			return fmt.Errorf("ingress: tls: %w", err)
		}
		tlsCfg = cr.TLSConfig()
	}
	if s.deduper, s.closeDeduper, err = s.openDeduper(ctx, rt); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		_ = s.closeDeduper()
		return fmt.Errorf("ingress: %w", err)
	}
	if !s.NoGroupCommit {
		if s.group, err = ingress.NewGroup(s.GroupCommit); err != nil {
			_ = ln.Close()
			_ = s.closeDeduper()
			return fmt.Errorf("ingress: group_commit: %w", err)
		}
	}
	s.addr = ln.Addr().String()
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	s.srv = s.server(s.Handler(rt, acc))
	s.srv.ReadTimeout, s.srv.ReadHeaderTimeout = s.ReadTimeout, readHeaderTimeout
	s.srv.ErrorLog = slog.NewLogLogger(rt.Logger.Handler(), slog.LevelWarn)
	s.srv.TLSConfig = tlsCfg
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rt.Logger.Error("ingress stopped", "error", err)
		}
	}()
	rt.Logger.Info("ingress listening", "addr", s.addr, "path", s.Path, "tls", tlsCfg != nil, "auth", s.authModes())
	return nil
}

// authModes names the credentials the ingress asks for, for the start log.
func (s *HTTPSource) authModes() string {
	if len(s.Auth) == 0 {
		return "none (loopback clients)"
	}
	return strings.Join(s.Auth, ",")
}

// Addr is the bound address once started.
func (s *HTTPSource) Addr() string { return s.addr }

// Close stops accepting requests and waits for in-flight ones (each ends once its
// Publish returned) up to ctx's deadline.
func (s *HTTPSource) Close(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	<-s.done
	if s.group != nil {
		s.group.Close() // after Shutdown: no request is waiting on it any more
		s.group = nil
	}
	return errors.Join(err, s.closeDeduper())
}

var (
	_ registry.SourceModule = (*HTTPSource)(nil)
	_ registry.Provisioner  = (*HTTPSource)(nil)
	_ registry.Validator    = (*HTTPSource)(nil)
)
