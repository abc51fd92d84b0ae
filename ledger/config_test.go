package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	t.Parallel()

	t.Run("DefaultsAreValidAndTuned", func(t *testing.T) {
		t.Parallel()
		var c Config
		c.setDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if c.FetchCooldown != DefaultFetchCooldown || c.RescueStuckJobsAfter <= c.JobTimeout {
			t.Fatalf("defaults not applied: %+v", c)
		}
	})

	t.Run("DSN", func(t *testing.T) {
		t.Parallel()
		for dsn, want := range map[string]Backend{
			"postgres://u@h/db":   Postgres,
			"postgresql://u@h/db": Postgres,
			"sqlite:///tmp/x.db":  SQLite,
			"sqlite:x.db":         SQLite,
			"file:x.db":           SQLite,
			"x.db":                SQLite,
		} {
			got, _, err := parseDSN(dsn)
			if err != nil || got != want {
				t.Errorf("parseDSN(%q) = %s, %v; want %s", dsn, got, err, want)
			}
		}
		for _, dsn := range []string{"mysql://x", "sqlite://x.db?mode=ro", "sqlite://"} {
			if _, _, err := parseDSN(dsn); err == nil {
				t.Errorf("parseDSN(%q) accepted", dsn)
			}
		}
	})

	t.Run("ValidateNamesTheField", func(t *testing.T) {
		t.Parallel()
		for field, mutate := range map[string]func(*Config){
			"Schema":               func(c *Config) { c.Schema = "bad-name" },
			"FetchCooldown":        func(c *Config) { c.FetchCooldown = time.Microsecond },
			"FetchPollInterval":    func(c *Config) { c.FetchPollInterval = time.Millisecond; c.FetchCooldown = 2 * time.Millisecond },
			"RescueStuckJobsAfter": func(c *Config) { c.RescueStuckJobsAfter = c.JobTimeout },
			"MaxConns":             func(c *Config) { c.MaxConns = 1 }, // Open would wait forever
			"DSN":                  func(c *Config) { c.DSN = "redis://x" },
			"PresenceInterval":     func(c *Config) { c.PresenceInterval = time.Millisecond },
			"PresenceGrace":        func(c *Config) { c.PresenceGrace = c.PresenceInterval },
		} {
			var c Config
			c.setDefaults()
			mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("%s: Validate() = %v, want an error naming it", field, err)
			}
		}
	})

	t.Run("RedactsPassword", func(t *testing.T) {
		t.Parallel()
		if got := redact("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
			t.Fatalf("redact = %q", got)
		}
	})
}

func TestPresenceDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	if c.PresenceInterval != DefaultPresenceInterval || c.PresenceGrace != DefaultPresenceGrace || !c.presenceOn() {
		t.Fatalf("presence defaults: interval %s grace %s", c.PresenceInterval, c.PresenceGrace)
	}
	if c := (Config{PresenceInterval: 5 * time.Second}).WithDefaults(); c.PresenceGrace != 10*time.Second {
		t.Fatalf("grace for a 5s interval = %s, want 10s", c.PresenceGrace)
	}
	off := Config{PresenceInterval: -1}.WithDefaults()
	if off.presenceOn() || off.Validate() != nil {
		t.Fatalf("PresenceInterval -1: on=%v, Validate=%v; want off and valid", off.presenceOn(), off.Validate())
	}
}

// Worker ids: fresh every time, marked, bounded and safe as file names; ids without
// the mark (other River clients) are never tested.
func TestWorkerID(t *testing.T) {
	t.Parallel()
	a, b := newWorkerID(), newWorkerID()
	if a == b || !isWorkerID(a) || len(a) > 100 || strings.ContainsAny(a, "/\\ ") {
		t.Fatalf("worker ids %q, %q", a, b)
	}
	for _, id := range []string{"", "myhost_2026_12_01T09_00_00_000000", "hubp1_../../etc/passwd", "hubp1_a/b"} {
		if isWorkerID(id) {
			t.Errorf("isWorkerID(%q) = true", id)
		}
	}
	if presenceKey(a) == presenceKey(b) {
		t.Fatal("two ids share a presence key")
	}
}
