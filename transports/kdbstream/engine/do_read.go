package engine

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// xreadArgs is the parsed option list of XREAD and XREADGROUP (t_stream.c
// xreadCommand's loop, with its error texts).
type xreadArgs struct {
	group, consumer string
	count           int64
	block           time.Duration // -1: no BLOCK
	noack           bool
	keys, ids       []string
}

func parseXRead(a []string, group bool) (xreadArgs, error) {
	x := xreadArgs{block: -1}
	name := "xread"
	if group {
		name = "xreadgroup"
	}
	streams := -1
	for i := 0; i < len(a); i++ {
		more := len(a) - i - 1
		switch o := strings.ToUpper(a[i]); {
		case o == "BLOCK" && more > 0:
			i++
			n, err := strconv.ParseInt(a[i], 10, 64)
			if err != nil {
				return x, errTimeoutNotInteger
			}
			if n < 0 {
				return x, errTimeoutNegative
			}
			x.block = time.Duration(n) * time.Millisecond
		case o == "COUNT" && more > 0:
			i++
			n, err := parseInt(a[i])
			if err != nil {
				return x, err
			}
			x.count = max(n, 0)
		case o == "STREAMS" && more > 0:
			streams = i + 1
			if (len(a)-streams)%2 != 0 {
				sym := "$"
				if group {
					sym = ">"
				}
				return x, cmdErr(errSyntax.code, "ERR Unbalanced '%s' list of streams: for each stream key an ID or '%s' must be specified.", name, sym)
			}
			i = len(a)
		case o == "GROUP" && more >= 2:
			if !group {
				return x, cmdErr(errSyntax.code, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
			}
			x.group, x.consumer = a[i+1], a[i+2]
			i += 2
		case o == "NOACK":
			if !group {
				return x, cmdErr(errSyntax.code, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
			}
			x.noack = true
		default:
			return x, errSyntax
		}
	}
	if streams < 0 {
		return x, errSyntax
	}
	if group && x.consumer == "" && x.group == "" {
		return x, cmdErr(errSyntax.code, "ERR Missing GROUP option for XREADGROUP")
	}
	n := (len(a) - streams) / 2
	x.keys, x.ids = a[streams:streams+n], a[streams+n:]
	return x, nil
}

// streamMapReply renders XREAD/XREADGROUP results; nil results are Redis's null array.
func streamMapReply(res []StreamEntries) any {
	if res == nil {
		return NilArray{}
	}
	out := make(StreamMap, 0, 2*len(res))
	for _, r := range res {
		out = append(out, r.Stream, Entries(r.Entries))
	}
	return out
}

func (e *Engine) doXRead(ctx context.Context, a []string) (any, error) {
	x, err := parseXRead(a, false)
	if err != nil {
		return nil, err
	}
	res, err := e.XRead(ctx, x.keys, x.ids, x.count, x.block)
	if err != nil {
		return nil, err
	}
	return streamMapReply(res), nil
}

func (e *Engine) doXReadGroup(ctx context.Context, a []string) (any, error) {
	x, err := parseXRead(a, true)
	if err != nil {
		return nil, err
	}
	res, err := e.XReadGroup(ctx, x.group, x.consumer, x.keys, x.ids, x.count, x.block, x.noack)
	if err != nil {
		return nil, err
	}
	return streamMapReply(res), nil
}

// doXRange is XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n]:
// the ids are checked before the options, as Redis does; COUNT 0 is a null array on
// an existing stream (t_stream.c xrangeGenericCommand).
func (e *Engine) doXRange(ctx context.Context, a []string, rev bool) (any, error) {
	startArg, endArg := a[1], a[2]
	if rev {
		startArg, endArg = a[2], a[1]
	}
	if _, _, err := parseRangeStart(startArg); err != nil {
		return nil, err
	}
	if _, _, err := parseRangeEnd(endArg); err != nil {
		return nil, err
	}
	var count int64 = -1
	for j := 3; j < len(a); j++ {
		if !strings.EqualFold(a[j], "COUNT") || j+1 >= len(a) {
			return nil, errSyntax
		}
		n, err := parseInt(a[j+1])
		if err != nil {
			return nil, err
		}
		count = max(n, 0)
		j++
	}
	if count == 0 {
		n, err := e.Exists(ctx, a[0])
		if err != nil || n == 0 {
			return []any{}, err
		}
		return NilArray{}, nil
	}
	var es []Entry
	var err error
	if rev {
		es, err = e.XRevRange(ctx, a[0], a[1], a[2], count)
	} else {
		es, err = e.XRange(ctx, a[0], a[1], a[2], count)
	}
	return Entries(es), err
}
