package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/transports/kdbstream/resp"
)

// startRESP serves the store's kdbstream engine over the Redis protocol (config
// section resp). The listener binds before intake starts, like the admin API's, so a
// port in use fails the start. Relative TLS paths are the config file's.
func (a *App) startRESP(ctx context.Context) error {
	rc := a.plan.File.Config.RESP
	eng, err := a.store.KDB(ctx)
	if err != nil {
		return fmt.Errorf("resp: %w", err)
	}
	cfg := resp.Config{Users: rc.Users, Logger: a.log.With("listener", "resp")}
	if rc.AdminToken {
		toks, err := auth.ParseAdminTokens(a.plan.File.Config.Admin.Token, "admin.token")
		if err != nil {
			return fmt.Errorf("resp: admin_token: %w", err)
		}
		cfg.Tokens = toks
	}
	if rc.TLS != nil {
		cert, err := tls.LoadX509KeyPair(a.plan.File.Resolve(rc.TLS.CertFile), a.plan.File.Resolve(rc.TLS.KeyFile))
		if err != nil {
			return fmt.Errorf("resp: tls: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	srv, err := resp.New(eng, cfg)
	if err != nil {
		return fmt.Errorf("resp: %w", err)
	}
	ln, err := net.Listen("tcp", rc.Listen)
	if err != nil {
		return fmt.Errorf("resp: %w", err)
	}
	a.resp = srv
	a.addrs["resp"] = ln.Addr().String()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
			a.log.Error("resp listener stopped", "error", err)
		}
	}()
	a.log.Info("resp listening", "addr", ln.Addr().String(), "tls", rc.TLS != nil, "auth", cfg.AuthRequired())
	return nil
}

// closeRESP stops the Redis protocol listener: blocked reads end, connections close.
func (a *App) closeRESP() error {
	if a.resp == nil {
		return nil
	}
	err := a.resp.Close()
	a.resp = nil
	return err
}
