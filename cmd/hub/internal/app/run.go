package app

import (
	"context"
	"errors"
)

// App is a running hub.
type App struct{}

// Start opens and starts everything in the plan.
func Start(ctx context.Context, p *Plan) (*App, error) {
	return nil, errors.New("not implemented")
}

// Close stops intake, drains and closes everything.
func (a *App) Close(ctx context.Context) error { return nil }
