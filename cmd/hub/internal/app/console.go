package app

import (
	"context"
	"fmt"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/cmd/hub/internal/ui"
)

// console builds the web console for the admin server (admin.ui, on by default) and
// starts its sampler; the access layer's stop (stopAccess, at Close) ends it. Its guard
// takes the admin listener's hosts and origins, with HTML form bodies instead of JSON
// and cross-site GET navigations allowed (a portal link clicked in a mail, a portal in
// another site's iframe).
func (a *App) console(srv *admin.Server) error {
	cfg := &a.plan.File.Config
	if !cfg.Admin.UI.On() {
		return nil
	}
	g, err := auth.NewGuard(auth.GuardConfig{ListenAddr: cfg.Admin.Listen, Hosts: cfg.Admin.Hosts, Origins: cfg.Admin.Origins,
		ContentTypes: ui.FormTypes, AllowNavigation: true})
	if err != nil {
		return fmt.Errorf("admin.ui: %w", err)
	}
	c := ui.Config{Admin: srv, Hub: a.hub, Schemas: a.plan.Schemas, Gatherer: a.reg, Guard: g, UI: cfg.Admin.UI, Logger: a.log,
		SampleEvery: cfg.Admin.UI.SampleEvery}
	ring, err := a.store.Keyring()
	if err != nil {
		return err
	}
	if ring != nil {
		c.CSRFKey = ring.DeriveKeys("console-csrf")[0]
	}
	if cfg.Store.Configured() {
		// In the ledger, so that replicas behind a load balancer share the sessions.
		if c.Sessions, err = a.store.Sessions(context.Background()); err != nil {
			return fmt.Errorf("admin.ui: %w", err)
		}
	}
	con, err := ui.New(c)
	if err != nil {
		return fmt.Errorf("admin.ui: %w", err)
	}
	con.Start()
	srv.Console = con
	prev := a.stopBackground
	a.stopBackground = func() {
		con.Close()
		if prev != nil {
			prev()
		}
	}
	return nil
}
