package engine

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Do runs one Redis command given as words ("XADD", "s", "*", "k", "v") and returns the
// reply in RESP2 shape: nil, int64, string, or []any. It is the front end the
// differential test drives against both this engine and a real Redis, and a debugging
// aid; applications use the typed methods.
func (e *Engine) Do(ctx context.Context, args ...string) (any, error) {
	if len(args) == 0 {
		return nil, errSyntax
	}
	cmd := strings.ToUpper(args[0])
	a := args[1:]
	switch cmd {
	case "XADD":
		return e.doXAdd(ctx, a)
	case "XGROUP":
		return e.doXGroup(ctx, a)
	case "XREADGROUP":
		return e.doXReadGroup(ctx, a)
	case "XACK":
		if len(a) < 3 {
			return nil, errWrongArgs(cmd)
		}
		return e.XAck(ctx, a[0], a[1], a[2:]...)
	case "XPENDING":
		return e.doXPending(ctx, a)
	case "XCLAIM":
		return e.doXClaim(ctx, a)
	case "XAUTOCLAIM":
		return e.doXAutoClaim(ctx, a)
	case "XDEL":
		if len(a) < 2 {
			return nil, errWrongArgs(cmd)
		}
		return e.XDel(ctx, a[0], a[1:]...)
	case "XTRIM":
		if len(a) < 3 {
			return nil, errWrongArgs(cmd)
		}
		t, i, err := parseTrim(a, 1)
		if err != nil {
			return nil, err
		}
		if i != len(a) {
			return nil, errSyntax
		}
		return e.XTrim(ctx, a[0], *t)
	case "XLEN":
		if len(a) != 1 {
			return nil, errWrongArgs(cmd)
		}
		return e.XLen(ctx, a[0])
	case "XRANGE":
		if len(a) != 3 && len(a) != 5 {
			return nil, errWrongArgs(cmd)
		}
		var count int64 = -1
		if len(a) == 5 {
			if !strings.EqualFold(a[3], "COUNT") {
				return nil, errSyntax
			}
			n, err := strconv.ParseInt(a[4], 10, 64)
			if err != nil {
				return nil, errNotInteger
			}
			if n <= 0 {
				return []any{}, nil
			}
			count = n
		}
		es, err := e.XRange(ctx, a[0], a[1], a[2], count)
		return entriesReply(es), err
	case "XINFO":
		return e.doXInfo(ctx, a)
	}
	return nil, cmdErr(errSyntax.code, "ERR unknown command '%s'", args[0])
}

func idReply(id ID) any { return id.String() }

func fieldsReply(f []string) any {
	if f == nil {
		return nil
	}
	out := make([]any, len(f))
	for i, v := range f {
		out[i] = v
	}
	return out
}

func entriesReply(es []Entry) []any {
	out := make([]any, 0, len(es))
	for _, en := range es {
		out = append(out, []any{idReply(en.ID), fieldsReply(en.Fields)})
	}
	return out
}

func (e *Engine) doXAdd(ctx context.Context, a []string) (any, error) {
	if len(a) < 4 {
		return nil, errWrongArgs("xadd")
	}
	add := Add{Stream: a[0]}
	i := 1
	for i < len(a) {
		switch strings.ToUpper(a[i]) {
		case "NOMKSTREAM":
			add.NoMkStream = true
			i++
			continue
		case "MAXLEN", "MINID":
			t, j, err := parseTrim(a, i)
			if err != nil {
				return nil, err
			}
			add.Trim, i = t, j
			continue
		}
		break
	}
	if i >= len(a) {
		return nil, errWrongArgs("xadd")
	}
	add.ID = a[i]
	add.Values = a[i+1:]
	if len(add.Values) == 0 || len(add.Values)%2 != 0 {
		return nil, errWrongArgs("xadd")
	}
	if add.ID != "*" && !strings.HasSuffix(add.ID, "-*") {
		if _, err := ParseID(add.ID, 0); err != nil {
			return nil, err
		}
	}
	id, ok, err := e.XAdd(ctx, add)
	if err != nil || !ok {
		return nil, err
	}
	return idReply(id), nil
}

func (e *Engine) doXGroup(ctx context.Context, a []string) (any, error) {
	if len(a) < 4 || !strings.EqualFold(a[0], "CREATE") {
		return nil, errSyntax
	}
	mk := false
	var er int64 = -1
	for i := 4; i < len(a); i++ {
		switch {
		case strings.EqualFold(a[i], "MKSTREAM"):
			mk = true
		case strings.EqualFold(a[i], "ENTRIESREAD") && i+1 < len(a):
			n, err := strconv.ParseInt(a[i+1], 10, 64)
			if err != nil {
				return nil, errNotInteger
			}
			er = n
			i++
		default:
			return nil, errSyntax
		}
	}
	if err := e.GroupCreate(ctx, a[1], a[2], a[3], mk, er); err != nil {
		return nil, err
	}
	return "OK", nil
}

func (e *Engine) doXReadGroup(ctx context.Context, a []string) (any, error) {
	if len(a) < 6 || !strings.EqualFold(a[0], "GROUP") {
		return nil, errSyntax
	}
	grp, consumer := a[1], a[2]
	var count int64
	block := time.Duration(-1)
	noack := false
	i := 3
	for ; i < len(a); i++ {
		switch strings.ToUpper(a[i]) {
		case "COUNT", "BLOCK":
			if i+1 >= len(a) {
				return nil, errSyntax
			}
			n, err := strconv.ParseInt(a[i+1], 10, 64)
			if err != nil {
				return nil, errNotInteger
			}
			if strings.EqualFold(a[i], "COUNT") {
				count = n
			} else {
				block = time.Duration(n) * time.Millisecond
			}
			i++
			continue
		case "NOACK":
			noack = true
			continue
		case "STREAMS":
		default:
			return nil, errSyntax
		}
		break
	}
	rest := a[i+1:]
	if len(rest) != 2 {
		return nil, cmdErr(errSyntax.code, "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
	}
	res, err := e.ReadGroupRaw(ctx, rest[0], grp, consumer, rest[1], count, block, noack)
	if err != nil || res.Nil {
		return nil, err
	}
	return []any{[]any{rest[0], entriesReply(res.Entries)}}, nil
}

func (e *Engine) doXPending(ctx context.Context, a []string) (any, error) {
	if len(a) < 2 {
		return nil, errWrongArgs("xpending")
	}
	if len(a) == 2 {
		ps, err := e.XPendingSummary(ctx, a[0], a[1])
		if err != nil {
			return nil, err
		}
		if ps.Count == 0 {
			return []any{int64(0), nil, nil, nil}, nil
		}
		cs := make([]any, 0, len(ps.Consumers))
		for _, c := range ps.Consumers {
			cs = append(cs, []any{c.Name, strconv.FormatInt(c.Count, 10)})
		}
		return []any{ps.Count, idReply(ps.Min), idReply(ps.Max), cs}, nil
	}
	pq := PendingQuery{}
	i := 2
	if strings.EqualFold(a[i], "IDLE") {
		if i+1 >= len(a) {
			return nil, errSyntax
		}
		n, err := strconv.ParseInt(a[i+1], 10, 64)
		if err != nil {
			return nil, errNotInteger
		}
		pq.MinIdle = time.Duration(n) * time.Millisecond
		i += 2
	}
	if len(a)-i != 3 && len(a)-i != 4 {
		return nil, errSyntax
	}
	pq.Start, pq.End = a[i], a[i+1]
	n, err := strconv.ParseInt(a[i+2], 10, 64)
	if err != nil {
		return nil, errNotInteger
	}
	pq.Count = n
	if len(a)-i == 4 {
		pq.Consumer = a[i+3]
	}
	ps, err := e.XPending(ctx, a[0], a[1], pq)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, []any{idReply(p.ID), p.Consumer, p.Idle.Milliseconds(), p.Deliveries})
	}
	return out, nil
}

func (e *Engine) doXClaim(ctx context.Context, a []string) (any, error) {
	if len(a) < 5 {
		return nil, errWrongArgs("xclaim")
	}
	mi, err := strconv.ParseInt(a[3], 10, 64)
	if err != nil {
		return nil, cmdErr(errSyntax.code, "ERR Invalid min-idle-time argument for XCLAIM")
	}
	var ids []string
	o := ClaimOptions{}
	i := 4
	for ; i < len(a); i++ {
		if _, err := ParseStrictID(a[i]); err != nil {
			break
		}
		ids = append(ids, a[i])
	}
	for ; i < len(a); i++ {
		switch strings.ToUpper(a[i]) {
		case "FORCE":
			o.Force = true
		case "JUSTID":
			o.JustID = true
		case "IDLE", "RETRYCOUNT":
			if i+1 >= len(a) {
				return nil, errSyntax
			}
			n, err := strconv.ParseInt(a[i+1], 10, 64)
			if err != nil {
				return nil, errNotInteger
			}
			if strings.EqualFold(a[i], "IDLE") {
				d := time.Duration(n) * time.Millisecond
				o.Idle = &d
			} else {
				o.RetryCount = &n
			}
			i++
		default:
			return nil, cmdErr(errSyntax.code, "ERR Unrecognized XCLAIM option '%s'", a[i])
		}
	}
	cs, err := e.XClaim(ctx, a[0], a[1], a[2], time.Duration(mi)*time.Millisecond, ids, o)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		if o.JustID {
			out = append(out, idReply(c.ID))
		} else {
			out = append(out, []any{idReply(c.ID), fieldsReply(c.Fields)})
		}
	}
	return out, nil
}

func (e *Engine) doXAutoClaim(ctx context.Context, a []string) (any, error) {
	if len(a) < 5 {
		return nil, errWrongArgs("xautoclaim")
	}
	mi, err := strconv.ParseInt(a[3], 10, 64)
	if err != nil {
		return nil, cmdErr(errSyntax.code, "ERR Invalid min-idle-time argument for XAUTOCLAIM")
	}
	var count int64 = 100
	justID := false
	for i := 5; i < len(a); i++ {
		switch {
		case strings.EqualFold(a[i], "COUNT") && i+1 < len(a):
			n, err := strconv.ParseInt(a[i+1], 10, 64)
			if err != nil || n < 1 {
				return nil, cmdErr(errSyntax.code, "ERR COUNT must be > 0")
			}
			count = n
			i++
		case strings.EqualFold(a[i], "JUSTID"):
			justID = true
		default:
			return nil, errSyntax
		}
	}
	r, err := e.XAutoClaim(ctx, a[0], a[1], a[2], time.Duration(mi)*time.Millisecond, a[4], count, justID)
	if err != nil {
		return nil, err
	}
	cl := make([]any, 0, len(r.Claimed))
	for _, c := range r.Claimed {
		if justID {
			cl = append(cl, idReply(c.ID))
		} else {
			cl = append(cl, []any{idReply(c.ID), fieldsReply(c.Fields)})
		}
	}
	del := make([]any, 0, len(r.Deleted))
	for _, id := range r.Deleted {
		del = append(del, idReply(id))
	}
	return []any{idReply(r.Next), cl, del}, nil
}

func (e *Engine) doXInfo(ctx context.Context, a []string) (any, error) {
	if len(a) != 2 {
		return nil, errSyntax
	}
	switch strings.ToUpper(a[0]) {
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
		return []any{
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
		opt := func(n int64) any {
			if n < 0 {
				return nil
			}
			return n
		}
		for _, g := range gs {
			out = append(out, []any{"name", g.Name, "consumers", g.Consumers, "pending", g.Pending,
				"last-delivered-id", idReply(g.LastDeliveredID), "entries-read", opt(g.EntriesRead), "lag", opt(g.Lag)})
		}
		return out, nil
	}
	return nil, errSyntax
}
