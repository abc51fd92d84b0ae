package ledger

import (
	"context"
	"log/slog"
)

// defaultLogger is slog.Default() from Warn up. River logs routine lifecycle at Info
// (client started, producer counts every few seconds); an operator wants what went
// wrong. Pass Config.Logger to see everything.
func defaultLogger() *slog.Logger {
	return slog.New(minLevel{slog.LevelWarn, slog.Default().Handler()})
}

type minLevel struct {
	min slog.Level
	h   slog.Handler
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler           { return minLevel{m.min, m.h.WithAttrs(as)} }
func (m minLevel) WithGroup(name string) slog.Handler              { return minLevel{m.min, m.h.WithGroup(name)} }
