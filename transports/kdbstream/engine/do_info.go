package engine

import (
	"context"
	"strings"
)

// doXInfo is XINFO STREAM key, XINFO GROUPS key and XINFO CONSUMERS key group, with
// Redis 7.0's fields (maps in RESP3). XINFO STREAM FULL is not supported.
func (e *Engine) doXInfo(ctx context.Context, a []string) (any, error) {
	sub := strings.ToUpper(a[0])
	want := map[string]int{"STREAM": 2, "GROUPS": 2, "CONSUMERS": 3}[sub]
	if want == 0 {
		return nil, cmdErr(errSyntax.code, "ERR unknown subcommand '%s'. Try XINFO HELP.", a[0])
	}
	if sub == "STREAM" && len(a) > 2 {
		if strings.EqualFold(a[2], "FULL") {
			return nil, cmdErr(errSyntax.code, "ERR XINFO STREAM FULL is not supported by kdbstream")
		}
		return nil, errSyntax
	}
	if len(a) != want {
		return nil, cmdErr(errSyntax.code, "ERR wrong number of arguments for 'xinfo|%s' command", strings.ToLower(sub))
	}
	opt := func(n int64) any {
		if n < 0 {
			return nil
		}
		return n
	}
	switch sub {
	case "STREAM":
		si, err := e.XInfoStream(ctx, a[1])
		if err != nil {
			return nil, err
		}
		entry := func(en *Entry) any {
			if en == nil {
				return nil
			}
			return []any{idReply(en.ID), fieldsReply(en.Fields)}
		}
		return Map{
			"length", si.Length,
			"last-generated-id", idReply(si.LastGeneratedID),
			"max-deleted-entry-id", idReply(si.MaxDeletedEntryID),
			"entries-added", si.EntriesAdded,
			"recorded-first-entry-id", idReply(si.RecordedFirstID),
			"groups", si.Groups,
			"first-entry", entry(si.FirstEntry),
			"last-entry", entry(si.LastEntry),
		}, nil
	case "GROUPS":
		gs, err := e.XInfoGroups(ctx, a[1])
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(gs))
		for _, g := range gs {
			var lag any
			if g.LagValid {
				lag = g.Lag
			}
			out = append(out, Map{"name", g.Name, "consumers", g.Consumers, "pending", g.Pending,
				"last-delivered-id", idReply(g.LastDeliveredID), "entries-read", opt(g.EntriesRead), "lag", lag})
		}
		return out, nil
	}
	cs, err := e.XInfoConsumers(ctx, a[1], a[2])
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, Map{"name", c.Name, "pending", c.Pending, "idle", c.Idle.Milliseconds()})
	}
	return out, nil
}
