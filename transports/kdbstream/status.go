package kdbstream

import (
	"context"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// ReadStatus reads a stream's length and its groups (XLEN, XINFO GROUPS). A stream that
// does not exist has length 0 and no group.
func ReadStatus(ctx context.Context, eng *engine.Engine, stream string) (streams.StreamStatus, error) {
	st := streams.StreamStatus{Stream: stream}
	n, err := eng.XLen(ctx, stream)
	if err != nil {
		return st, classify(err)
	}
	st.Length = n
	groups, err := eng.XInfoGroups(ctx, stream)
	if err = classify(err); hub.Code(err) == hub.NotFound {
		return st, nil // no such stream: no group
	} else if err != nil {
		return st, err
	}
	for _, g := range groups {
		st.Groups = append(st.Groups, streams.GroupStatus{Name: g.Name, Consumers: g.Consumers, Pending: g.Pending, Lag: g.Lag, LastDeliveredID: g.LastDeliveredID.String()})
	}
	return st, nil
}

// Status reports the transport's stream (ReadStatus). It is nil when the transport has
// no single stream: category naming and a Namer pick one per event.
func (t *Transport) Status(ctx context.Context) (*streams.StreamStatus, error) {
	return streams.FixedStatus(ctx, t.cfg.selection().FixedStream(), func(ctx context.Context, stream string) (streams.StreamStatus, error) {
		return ReadStatus(ctx, t.eng, stream)
	})
}

// DLQ operates the dead-letter stream of the transport's stream ("<stream>:dlq", or
// events.dlq under category naming), where consumers of that stream give up on entries.
// It is nil when the transport's streams are a Namer's own.
func (t *Transport) DLQ() *DLQ {
	dlq := t.cfg.selection().DLQStream()
	if dlq == "" {
		return nil
	}
	return NewDLQ(t.eng, dlq)
}
