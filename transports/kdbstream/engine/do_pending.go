package engine

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"
)

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
			return []any{int64(0), nil, nil, NilArray{}}, nil
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
			// Redis 7.0 takes 1..LONG_MAX/16 (an id is 16 bytes, the scan COUNT*10
			// entries); past it the same error, and COUNT*10 here cannot overflow.
			n, err := strconv.ParseInt(a[i+1], 10, 64)
			if err != nil || n < 1 || n > math.MaxInt64/16 {
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
