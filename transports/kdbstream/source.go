package kdbstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Reading the Redis side of a migration. Raw commands rather than go-redis's typed
// ones where those lose information: XRANGE's typed reply is a map (field order lost),
// XINFO GROUPS turns a nil entries-read into 0 (lag bookkeeping lost). Raw replies are
// arrays under RESP2 and maps under RESP3; kv reads both.

// readSource snapshots a stream's counters, groups, consumers and pending entries.
func readSource(ctx context.Context, rdb redis.UniversalClient, name string) (*sourceStream, error) {
	src := &sourceStream{name: name}
	raw, err := rdb.Do(ctx, "XINFO", "STREAM", name).Result()
	if err != nil {
		return nil, hub.Errorf(redisCode(err), "kdbstream: migrate: XINFO STREAM %s: %v", name, err)
	}
	info := kv(raw)
	src.info = redisInfo{
		Length:            toInt(info["length"]),
		LastGeneratedID:   toStr(info["last-generated-id"]),
		MaxDeletedEntryID: toStr(info["max-deleted-entry-id"]),
		EntriesAdded:      toInt(info["entries-added"]),
	}
	if src.info.MaxDeletedEntryID == "" {
		src.info.MaxDeletedEntryID = "0-0"
	}
	raw, err = rdb.Do(ctx, "XINFO", "GROUPS", name).Result()
	if err != nil {
		return nil, hub.Errorf(redisCode(err), "kdbstream: migrate: XINFO GROUPS %s: %v", name, err)
	}
	groups, _ := raw.([]any)
	for _, gr := range groups {
		g := kv(gr)
		last, err := engine.ParseStrictID(toStr(g["last-delivered-id"]))
		if err != nil {
			return nil, fmt.Errorf("kdbstream: migrate %s: %w", name, err)
		}
		gs := engine.GroupState{Name: toStr(g["name"]), LastDeliveredID: last, EntriesRead: -1}
		if g["entries-read"] != nil {
			gs.EntriesRead = toInt(g["entries-read"])
		}
		if gs.Consumers, err = consumers(ctx, rdb, name, gs.Name); err != nil {
			return nil, err
		}
		if gs.Pending, err = pending(ctx, rdb, name, gs.Name); err != nil {
			return nil, err
		}
		src.groups = append(src.groups, gs)
	}
	return src, nil
}

func consumers(ctx context.Context, rdb redis.UniversalClient, stream, group string) ([]string, error) {
	raw, err := rdb.Do(ctx, "XINFO", "CONSUMERS", stream, group).Result()
	if err != nil {
		return nil, hub.Errorf(redisCode(err), "kdbstream: migrate: XINFO CONSUMERS %s %s: %v", stream, group, err)
	}
	list, _ := raw.([]any)
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, toStr(kv(c)["name"]))
	}
	return out, nil
}

// pending pages through XPENDING's extended form (owner, idle, delivery count).
func pending(ctx context.Context, rdb redis.UniversalClient, stream, group string) ([]engine.PendingState, error) {
	var out []engine.PendingState
	start := "-"
	const page = 1000
	for {
		ps, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: group, Start: start, End: "+", Count: page}).Result()
		if err != nil {
			return nil, hub.Errorf(redisCode(err), "kdbstream: migrate: XPENDING %s %s: %v", stream, group, err)
		}
		for _, p := range ps {
			id, err := engine.ParseStrictID(p.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, engine.PendingState{ID: id, Consumer: p.Consumer, Idle: p.Idle, Deliveries: p.RetryCount})
		}
		if len(ps) < page {
			return out, nil
		}
		start = "(" + ps[len(ps)-1].ID
	}
}

// xrange reads one page of entries with their field order.
func xrange(ctx context.Context, rdb redis.UniversalClient, stream, start string, count int) ([]engine.Entry, error) {
	raw, err := rdb.Do(ctx, "XRANGE", stream, start, "+", "COUNT", count).Result()
	if err != nil {
		return nil, hub.Errorf(redisCode(err), "kdbstream: migrate: XRANGE %s: %v", stream, err)
	}
	list, _ := raw.([]any)
	out := make([]engine.Entry, 0, len(list))
	for _, it := range list {
		pair, _ := it.([]any)
		if len(pair) != 2 {
			return nil, hub.Errorf(hub.Internal, "kdbstream: migrate: unexpected XRANGE reply %v", it)
		}
		id, err := engine.ParseStrictID(toStr(pair[0]))
		if err != nil {
			return nil, err
		}
		fv, _ := pair[1].([]any)
		fields := make([]string, len(fv))
		for i, f := range fv {
			fields[i] = toStr(f)
		}
		out = append(out, engine.Entry{ID: id, Fields: fields})
	}
	return out, nil
}

// kv reads a RESP2 flat key/value array or a RESP3 map.
func kv(v any) map[string]any {
	out := map[string]any{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			out[toStr(x[i])] = x[i+1]
		}
	case map[any]any:
		for k, val := range x {
			out[toStr(k)] = val
		}
	case map[string]any:
		return x
	}
	return out
}

func toStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// redisCode classifies a Redis error of the migration: a missing key is NotFound,
// network trouble Unavailable.
func redisCode(err error) hub.ErrorCode {
	if err == nil {
		return hub.OK
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		if msg := rerr.Error(); len(msg) >= 10 && msg[:10] == "ERR no suc" {
			return hub.NotFound
		}
		return hub.FailedPrecondition
	}
	return hub.Unavailable
}
