package resp

import (
	"crypto/sha256"
	"crypto/subtle"
)

// authenticate checks a user name and password: a configured user's password
// (compared as SHA-256 digests in constant time, so neither content nor length shows
// in the timing), or an operator admin token (Config.Tokens) for any user name. It
// returns the name the client is known by (CLIENT LIST's user).
func (s *Server) authenticate(c *client, user, pass string) (string, bool) {
	if want, ok := s.cfg.Users[user]; ok {
		a, b := sha256.Sum256([]byte(pass)), sha256.Sum256([]byte(want))
		if subtle.ConstantTimeCompare(a[:], b[:]) == 1 {
			return user, true
		}
	}
	if s.cfg.Tokens != nil {
		p, err := s.cfg.Tokens.Verify(c.ctx, pass)
		if err == nil && p.Tenant == "" {
			return "token:" + p.ID, true
		}
	}
	return "", false
}

// cmdAuth is AUTH <password> (the user "default") or AUTH <user> <password>.
func cmdAuth(s *Server, c *client, args []string) {
	var user, pass string
	switch len(args) {
	case 2:
		user, pass = "default", args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.writeErr(wrongArgs("auth"))
		return
	}
	if !s.cfg.AuthRequired() {
		if len(args) == 2 {
			c.writeErr(errNoPass)
			return
		}
		if user != "default" {
			c.writeErr(errWrongPass)
			return
		}
		c.write(okReply)
		return
	}
	name, ok := s.authenticate(c, user, pass)
	if !ok {
		c.writeErr(errWrongPass)
		return
	}
	c.authed = true
	c.mu.Lock()
	c.user = name
	c.mu.Unlock()
	c.write(okReply)
}
