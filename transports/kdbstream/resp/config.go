package resp

import (
	"context"
	"crypto/tls"
	"log/slog"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
)

// Version is the Redis version the front reports (HELLO, INFO): the command set and
// replies are Redis 7.0's, which clients use to pick features.
const Version = "7.0.0"

// TokenVerifier checks an admin token presented as an AUTH password (auth.AdminTokens).
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// Config configures a Server.
type Config struct {
	// Users maps ACL-style user names to passwords: AUTH <user> <password>, or
	// AUTH <password> and HELLO 3 AUTH default <password> for the user "default".
	// Passwords are compared in constant time.
	Users map[string]string `yaml:"users"`
	// Tokens, when set, also accepts an operator admin token (one without a tenant) as
	// the password of any user name. Tenant-scoped tokens are refused: stream commands
	// are not scoped by tenant.
	Tokens TokenVerifier `yaml:"-"`
	// TLS, when set, serves TLS (rediss:// clients) instead of plain TCP.
	TLS *tls.Config `yaml:"-"`
	// Logger receives connection errors; default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

// AuthRequired reports whether clients must authenticate.
func (c *Config) AuthRequired() bool { return len(c.Users) > 0 || c.Tokens != nil }

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate checks the configuration and names the offending field.
func (c *Config) Validate() error {
	for u, p := range c.Users {
		if u == "" {
			return hub.Errorf(hub.InvalidArgument, "resp: Users: empty user name")
		}
		if p == "" {
			return hub.Errorf(hub.InvalidArgument, "resp: Users[%s]: empty password", u)
		}
	}
	return nil
}
