package modules

import (
	"context"
	"errors"
	"fmt"

	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/cmd/hub/internal/store"
	"github.com/koder/eventhub/ledger"
)

// openGroup starts the ingress's group commit on the store's ledger: concurrent
// requests' outbox transactions (rows, direct webhook deliveries, dedupe records)
// share commits. Nil when switched off (no_group_commit) or without a store.
func (s *HTTPSource) openGroup(ctx context.Context, rt *registry.Runtime) (*ledger.Group, error) {
	if s.NoGroupCommit {
		return nil, nil
	}
	l, err := rt.Ledger(ctx)
	if errors.Is(err, store.ErrNone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g, err := ledger.NewGroup(l, s.GroupCommit)
	if err != nil {
		return nil, fmt.Errorf("ingress: group_commit: %w", err)
	}
	return g, nil
}

// closeGroup stops the group's committers once in-flight requests ended (Close calls it
// after the server's Shutdown).
func (s *HTTPSource) closeGroup() {
	if s.group != nil {
		s.group.Close()
		s.group = nil
	}
}
