package config

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/outbox"
)

// validate runs the checks that need no module, one validator per section. Each
// returns every problem of its section (errors.Join), each tied to its key, so one
// run of `hub lint` lists them all.
func (f *File) validate() Problems {
	c := &f.Config
	var ps Problems
	for _, s := range []struct {
		path string
		err  error
	}{
		{"", c.validateTop()},
		{"log", c.Log.validate()},
		{"store", c.Store.validate()},
		{"store.ledger", c.Store.validateLedger()},
		{"outbox", validateOutbox(c.Outbox)},
		{"admin", c.Admin.validate()},
		{"admin", c.Admin.AdminAccess.validate()},
		{"admin.ui", c.Admin.UI.validate()},
		{"auth", c.Auth.validate()},
		{"auth.api_keys", c.Auth.APIKeys.Validate()},
		{"auth.jwt", c.Auth.validateJWT()},
		{"secrets", c.Secrets.validate()},
		{"metrics", c.Metrics.validate()},
		{"resp", c.validateRESP()},
		{"schemas", c.Schemas.validate()},
		{"routes", c.validateRoutes()},
		{"sources", c.validateSourceFilters()},
		{"transports", c.validateTransportFilters()},
		{"failures", c.validateFailures()},
	} {
		ps = append(ps, f.ProblemsAt(s.path, "", s.err)...)
	}
	return ps
}

func (c *Config) validateTop() error {
	if c.ShutdownTimeout < 0 {
		return Field("shutdown_timeout", "must not be negative")
	}
	if c.InstanceID != "" && !validInstanceID(c.InstanceID) {
		return Field("instance_id", "%q: want letters, digits and . - _ : (at most 128)", c.InstanceID)
	}
	return nil
}

// validInstanceID accepts what is safe in a log attribute and a Prometheus label value
// without quoting surprises: letters, digits, '.', '-', '_', ':'.
func validInstanceID(s string) bool {
	if len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:", r)) {
			return false
		}
	}
	return true
}

func (l Log) validate() error {
	var errs []error
	switch l.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, Field("level", "unknown level %q (debug, info, warn, error)", l.Level))
	}
	switch l.Format {
	case "text", "json":
	default:
		errs = append(errs, Field("format", "unknown format %q (text, json)", l.Format))
	}
	return errors.Join(errs...)
}

func (s Store) validate() error {
	var errs []error
	if s.SQLite != "" && s.Postgres != "" {
		errs = append(errs, Field("postgres", "set either store.sqlite or store.postgres, not both"))
	}
	if s.Postgres != "" && !strings.HasPrefix(s.Postgres, "postgres://") && !strings.HasPrefix(s.Postgres, "postgresql://") {
		errs = append(errs, Field("postgres", "expected a postgres:// URL"))
	}
	if s.StreamsSQLite != "" && s.SQLite == "" {
		errs = append(errs, Field("streams_sqlite", "applies to store.sqlite only"))
	}
	if s.Schema != "" && s.Postgres == "" {
		errs = append(errs, Field("schema", "schema applies to store.postgres only"))
	} else if s.Schema != "" {
		// the ledger's rule (River's tables live in it); kdbstream uses the same schema
		c := ledger.Config{Schema: s.Schema}.WithDefaults()
		if err := c.Validate(); err != nil {
			errs = append(errs, &FieldError{Key: "schema", Err: err})
		}
	}
	return errors.Join(errs...)
}

// validateLedger runs ledger.Config.Validate on the configuration ledger.Open will use
// (its defaults applied to a copy by WithDefaults), so lint agrees with Open and the
// binary keeps no copy of the ledger's defaults. The database comes from the store.
func (s Store) validateLedger() error {
	var errs []error
	if s.Ledger.DSN != "" {
		errs = append(errs, Field("dsn", "the ledger's database is the store's: set store.sqlite or store.postgres"))
	}
	if s.Ledger.Schema != "" {
		errs = append(errs, Field("schema", "the ledger's schema is the store's: set store.schema"))
	}
	c := s.Ledger
	c.DSN, c.Schema = "", ""
	c = c.WithDefaults()
	return errors.Join(append(errs, c.Validate())...)
}

// validateOutbox runs the outbox's own Validate on the configuration outbox.New would
// use (its defaults applied to a copy by WithDefaults), so lint agrees with New.
func validateOutbox(c outbox.Config) error {
	c = c.WithDefaults()
	return c.Validate()
}

func (a Admin) validate() error {
	if !a.AdminEnabled() {
		return nil
	}
	if err := checkListen(a.Listen); err != nil {
		return &FieldError{Key: "listen", Err: err}
	}
	if a.Token == "" && a.TokenFile == "" && !IsLoopbackListen(a.Listen) {
		return Field("listen", "without admin.token the admin API may only listen on a loopback address (127.0.0.1, ::1, localhost) (or give admin.token_file)")
	}
	if _, err := auth.LoadAdminTokens(a.Token, ""); err != nil {
		return &FieldError{Key: "token", Err: err}
	}
	return nil
}

func (m Metrics) validate() error {
	if m.Listen == "" {
		return nil
	}
	if err := checkListen(m.Listen); err != nil {
		return &FieldError{Key: "listen", Err: err}
	}
	if _, err := auth.NewGuard(auth.GuardConfig{Hosts: m.Hosts}); err != nil {
		return &FieldError{Key: "hosts", Err: err}
	}
	return nil
}

func (s Schemas) validate() error {
	var errs []error
	for i, sf := range s.Files {
		p := fmt.Sprintf("files[%d]", i)
		if sf.Type == "" {
			errs = append(errs, Field(p+".type", "required"))
		} else if err := CheckPattern(sf.Type); err != nil || strings.ContainsAny(sf.Type, "*#") {
			errs = append(errs, Field(p+".type", "not an event type: %q", sf.Type))
		}
		if sf.Path == "" {
			errs = append(errs, Field(p+".path", "required"))
		}
		if sf.Major < 0 {
			errs = append(errs, Field(p+".major", "must not be negative"))
		}
	}
	return errors.Join(errs...)
}

// validateRoutes checks each route and, across routes, that a (transport, pattern)
// pair appears once: the pair names the hub route and the outbox destination.
func (c *Config) validateRoutes() error {
	var errs []error
	targets := map[string]int{} // "<transport>:<pattern>" -> first route index
	for i, r := range c.Routes {
		p := fmt.Sprintf("[%d]", i)
		errs = append(errs, c.validateRoute(p, r))
		for j, name := range r.To {
			tp := fmt.Sprintf("%s.to[%d]", p, j)
			if len(r.To) == 1 {
				tp = p + ".to"
			}
			if first, dup := targets[name+":"+r.Pattern]; dup && first != i {
				errs = append(errs, Field(tp, "routes[%d] already sends %q to %q", first, r.Pattern, name))
			} else if !dup {
				targets[name+":"+r.Pattern] = i
			}
		}
	}
	return errors.Join(errs...)
}

// validateRoute checks one route; p is its key below routes ("[0]").
func (c *Config) validateRoute(p string, r Route) error {
	var errs []error
	if r.Pattern == "" {
		errs = append(errs, Field(p+".pattern", "required"))
	} else if err := CheckPattern(r.Pattern); err != nil {
		errs = append(errs, &FieldError{Key: p + ".pattern", Err: err})
	}
	if len(r.To) == 0 {
		errs = append(errs, Field(p+".to", "required: one transport name or a list"))
	}
	seen := map[string]bool{}
	for j, name := range r.To {
		tp := fmt.Sprintf("%s.to[%d]", p, j)
		if len(r.To) == 1 {
			tp = p + ".to"
		}
		if _, ok := c.Transports[name]; !ok {
			known := sortedKeys(c.Transports)
			errs = append(errs, Field(tp, "unknown transport %q%s (defined: %s)", name, DidYouMean(name, known), strings.Join(known, ", ")))
		}
		if seen[name] {
			errs = append(errs, Field(tp, "transport %q listed twice", name))
		}
		seen[name] = true
	}
	switch r.Delivery {
	case DeliveryDirect:
	case DeliveryOutbox:
		if !c.Store.Configured() {
			errs = append(errs, Field(p+".delivery", "outbox delivery needs a store (store.sqlite or store.postgres)"))
		}
		if r.Retry != (Retry{}) {
			errs = append(errs, Field(p+".retry", "retry applies to direct delivery; outbox routes retry as the outbox section says (max_attempts, backoff_base, backoff_max, schedule)"))
		}
	default:
		errs = append(errs, Field(p+".delivery", "unknown delivery %q (direct, outbox)", r.Delivery))
	}
	if r.DefaultSubject != strings.TrimSpace(r.DefaultSubject) {
		errs = append(errs, Field(p+".default_subject", "must not start or end with spaces"))
	}
	errs = append(errs, r.Retry.validate(p+".retry."))
	errs = append(errs, CheckFilter(p+".filter", r.Filter))
	return errors.Join(errs...)
}

func (r Retry) validate(prefix string) error {
	var errs []error
	if r.Attempts < 0 {
		errs = append(errs, Field(prefix+"attempts", "must not be negative"))
	}
	if r.Backoff < 0 {
		errs = append(errs, Field(prefix+"backoff", "must not be negative"))
	}
	if r.BackoffMax != 0 && r.BackoffMax < r.Backoff {
		errs = append(errs, Field(prefix+"max_backoff", "must not be below retry.backoff"))
	}
	return errors.Join(errs...)
}

// CheckPattern checks a route pattern with the hub's own compiler, so lint and
// Forward can never disagree.
func CheckPattern(p string) error {
	if _, err := hub.CompilePattern(p); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "hub: "))
	}
	return nil
}

func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("expected host:port, got %q", addr)
	}
	if port == "" {
		return fmt.Errorf("missing port in %q", addr)
	}
	return nil
}

// IsLoopbackListen reports whether a listen address binds loopback only.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sortStrings(ks)
	return ks
}
