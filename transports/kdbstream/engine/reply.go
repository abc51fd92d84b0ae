package engine

// Reply shapes of Do besides nil (Redis's null bulk), int64, string (a bulk string,
// binary safe) and []any (an array). Redis sends some replies differently in RESP2
// and RESP3; these types say which, so one command layer serves both protocols (the
// Redis protocol front renders them per connection, the differential test as RESP2).

// Status is a simple string reply ("+OK", "+PONG", TYPE's "+stream").
type Status string

// Map is a reply RESP3 sends as a map and RESP2 as a flat array k1 v1 k2 v2 ...
// (XINFO STREAM, each row of XINFO GROUPS and CONSUMERS, HELLO). It holds the flat
// pairs in order.
type Map []any

// StreamMap is XREAD's and XREADGROUP's reply: RESP3 sends a map stream -> entries,
// RESP2 an array of [stream, entries] pairs. It holds the flat pairs in order.
type StreamMap []any

// Entries is a list of stream entries as Redis replies with them (XRANGE, XREAD,
// XREADGROUP): an array of [id, [field, value, ...]], the fields of an entry deleted
// while pending a null array. It stays typed so that the Redis protocol front writes a
// batch of entries without building a tree of values for each (about ten allocations
// an entry); Values is that tree, and RESP2 returns it.
type Entries []Entry

// Values returns es as nested arrays of strings.
func (es Entries) Values() []any {
	out := make([]any, 0, len(es))
	for _, en := range es {
		out = append(out, []any{idReply(en.ID), fieldsReply(en.Fields)})
	}
	return out
}

// NilArray is Redis's null array (RESP2 "*-1", RESP3 null): XREAD's timeout, the
// fields of a pending entry deleted from its stream.
type NilArray struct{}

// RESP2 returns v as a RESP2 client (go-redis with protocol 2) decodes it: statuses as
// strings, maps flat, stream maps as pairs, null arrays as nil.
func RESP2(v any) any {
	switch x := v.(type) {
	case Status:
		return string(x)
	case NilArray:
		return nil
	case Map:
		return resp2Slice(x)
	case StreamMap:
		out := make([]any, 0, len(x)/2)
		for i := 0; i+1 < len(x); i += 2 {
			out = append(out, []any{RESP2(x[i]), RESP2(x[i+1])})
		}
		return out
	case []any:
		return resp2Slice(x)
	case Entries:
		return resp2Slice(x.Values())
	}
	return v
}

func resp2Slice(x []any) []any {
	out := make([]any, len(x))
	for i, e := range x {
		out[i] = RESP2(e)
	}
	return out
}
