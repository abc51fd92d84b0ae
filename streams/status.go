package streams

import "context"

// StreamStatus is a stream as operators see it: its length and each consumer group's
// progress. The Redis and kdbstream transports report it in this one shape
// (redisstream.ReadStatus and kdbstream.ReadStatus both return it), so a console or
// an alert reads either bus alike, before and after an R9 cutover.
type StreamStatus struct {
	// Stream is the stream key.
	Stream string `json:"stream"`
	// Length is the number of entries (XLEN); 0 for a stream that does not exist.
	Length int64 `json:"length"`
	// Groups are the stream's consumer groups (XINFO GROUPS), nil when it has none.
	Groups []GroupStatus `json:"groups"`
}

// GroupStatus is one consumer group's progress on a stream, as XINFO GROUPS reports it.
type GroupStatus struct {
	Name      string `json:"name"`
	Consumers int64  `json:"consumers"`
	// Pending counts entries delivered to the group and not acked yet (R4.5).
	Pending int64 `json:"pending"`
	// Lag counts entries not delivered to the group yet; kdbstream reports -1 where
	// Redis would answer nil (the count is unknown after deletions inside the range).
	Lag int64 `json:"lag"`
	// LastDeliveredID is the id of the last entry delivered to the group.
	LastDeliveredID string `json:"last_delivered_id"`
}

// FixedStatus is a transport's Status: read's status of stream, the one stream the
// transport writes, or nil when it writes several (category naming, a Namer: stream "").
func FixedStatus(ctx context.Context, stream string, read func(context.Context, string) (StreamStatus, error)) (*StreamStatus, error) {
	if stream == "" {
		return nil, nil
	}
	st, err := read(ctx, stream)
	if err != nil {
		return nil, err
	}
	return &st, nil
}
