package config

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
)

// validate runs the checks that need no module: known values, addresses, route targets.
// Each problem names the key it is about.
func (f *File) validate() Problems {
	c := &f.Config
	var ps Problems
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		ps = append(ps, f.Problem("log.level", "unknown level %q (debug, info, warn, error)", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		ps = append(ps, f.Problem("log.format", "unknown format %q (text, json)", c.Log.Format))
	}
	if c.Store.SQLite != "" && c.Store.Postgres != "" {
		ps = append(ps, f.Problem("store.postgres", "set either store.sqlite or store.postgres, not both"))
	}
	if c.Store.Postgres != "" && !strings.HasPrefix(c.Store.Postgres, "postgres://") && !strings.HasPrefix(c.Store.Postgres, "postgresql://") {
		ps = append(ps, f.Problem("store.postgres", "expected a postgres:// URL"))
	}
	if c.Store.Schema != "" && c.Store.Postgres == "" {
		ps = append(ps, f.Problem("store.schema", "schema applies to store.postgres only"))
	}
	if c.ShutdownTimeout < 0 {
		ps = append(ps, f.Problem("shutdown_timeout", "must not be negative"))
	}
	if c.Admin.AdminEnabled() {
		if err := checkListen(c.Admin.Listen); err != nil {
			ps = append(ps, f.Problem("admin.listen", "%v", err))
		} else if c.Admin.Token == "" && !IsLoopbackListen(c.Admin.Listen) {
			ps = append(ps, f.Problem("admin.listen", "without admin.token the admin API may only listen on a loopback address (127.0.0.1, ::1, localhost)"))
		}
	}
	if c.Metrics.Listen != "" {
		if err := checkListen(c.Metrics.Listen); err != nil {
			ps = append(ps, f.Problem("metrics.listen", "%v", err))
		}
	}
	if err := c.Store.LedgerConfig("", nil).Check(); err != nil {
		ps = append(ps, f.ProblemAtMentioned("store.ledger", err.Error()))
	}
	if err := checkOutbox(c.Outbox); err != nil {
		ps = append(ps, f.ProblemAtMentioned("outbox", err.Error()))
	}
	for i, s := range c.Schemas.Files {
		p := fmt.Sprintf("schemas.files[%d]", i)
		if s.Type == "" {
			ps = append(ps, f.Problem(p+".type", "required"))
		} else if err := CheckPattern(s.Type); err != nil || strings.ContainsAny(s.Type, "*#") {
			ps = append(ps, f.Problem(p+".type", "not an event type: %q", s.Type))
		}
		if s.Path == "" {
			ps = append(ps, f.Problem(p+".path", "required"))
		}
		if s.Major < 0 {
			ps = append(ps, f.Problem(p+".major", "must not be negative"))
		}
	}
	targets := map[string]int{} // "<transport>:<pattern>" -> first route index
	for i, r := range c.Routes {
		p := fmt.Sprintf("routes[%d]", i)
		if r.Pattern == "" {
			ps = append(ps, f.Problem(p+".pattern", "required"))
		} else if err := CheckPattern(r.Pattern); err != nil {
			ps = append(ps, f.Problem(p+".pattern", "%v", err))
		}
		if len(r.To) == 0 {
			ps = append(ps, f.Problem(p+".to", "required: one transport name or a list"))
		}
		seen := map[string]bool{}
		for j, name := range r.To {
			tp := fmt.Sprintf("%s.to[%d]", p, j)
			if len(r.To) == 1 {
				tp = p + ".to"
			}
			if _, ok := c.Transports[name]; !ok {
				ps = append(ps, f.Problem(tp, "unknown transport %q (defined: %s)", name, strings.Join(sortedKeys(c.Transports), ", ")))
			}
			if seen[name] {
				ps = append(ps, f.Problem(tp, "transport %q listed twice", name))
			} else if first, dup := targets[name+":"+r.Pattern]; dup {
				// the pair names the hub route and the outbox destination: it must be unique
				ps = append(ps, f.Problem(tp, "routes[%d] already sends %q to %q", first, r.Pattern, name))
			} else {
				targets[name+":"+r.Pattern] = i
			}
			seen[name] = true
		}
		switch r.Delivery {
		case DeliveryDirect:
		case DeliveryOutbox:
			if c.Store.SQLite == "" && c.Store.Postgres == "" {
				ps = append(ps, f.Problem(p+".delivery", "outbox delivery needs a store (store.sqlite or store.postgres)"))
			}
			if r.Retry != (Retry{}) {
				ps = append(ps, f.Problem(p+".retry", "retry applies to direct delivery; outbox routes retry as the outbox section says (max_attempts, backoff_base, backoff_max, schedule)"))
			}
		default:
			ps = append(ps, f.Problem(p+".delivery", "unknown delivery %q (direct, outbox)", r.Delivery))
		}
		if r.DefaultSubject != strings.TrimSpace(r.DefaultSubject) {
			ps = append(ps, f.Problem(p+".default_subject", "must not start or end with spaces"))
		}
		if r.Retry.Attempts < 0 {
			ps = append(ps, f.Problem(p+".retry.attempts", "must not be negative"))
		}
		if r.Retry.Backoff < 0 {
			ps = append(ps, f.Problem(p+".retry.backoff", "must not be negative"))
		}
		if r.Retry.MaxBackoff != 0 && r.Retry.MaxBackoff < r.Retry.Backoff {
			ps = append(ps, f.Problem(p+".retry.max_backoff", "must not be below retry.backoff"))
		}
	}
	return ps
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
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("expected host:port, got %q", addr)
	}
	_ = host
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

// checkOutbox runs the outbox's own Validate on the configuration outbox.New would use
// (its defaults applied to a copy by WithDefaults), so lint agrees with New.
func checkOutbox(c outbox.Config) error {
	c = c.WithDefaults()
	return c.Validate()
}
