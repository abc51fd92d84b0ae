package engine

import (
	"context"
	"strings"
	"time"
)

func (e *Engine) doType(ctx context.Context, a []string) (any, error) {
	t, err := e.Type(ctx, a[0])
	return Status(t), err
}

func (e *Engine) doGet(ctx context.Context, a []string) (any, error) {
	v, ok, err := e.Get(ctx, a[0])
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// doStrlen mirrors STRLEN: the bytes of a string key's value, 0 when there is none
// (redis-cli --bigkeys sizes strings with it).
func (e *Engine) doStrlen(ctx context.Context, a []string) (any, error) {
	v, ok, err := e.Get(ctx, a[0])
	if err != nil || !ok {
		return int64(0), err
	}
	return int64(len(v)), nil
}

func (e *Engine) doTTL(ctx context.Context, a []string) (any, error) {
	ms, err := e.PTTL(ctx, a[0])
	if err != nil || ms < 0 {
		return ms, err
	}
	return (ms + 500) / 1000, nil
}

// doSet parses SET key value [NX|XX] [GET] [EX s|PX ms|EXAT|PXAT t|KEEPTTL] (t_string.c
// parseExtendedStringArgumentsOrReply; EXAT/PXAT are not supported).
func (e *Engine) doSet(ctx context.Context, a []string) (any, error) {
	var o SetOptions
	expiry := false
	for i := 2; i < len(a); i++ {
		switch opt := strings.ToUpper(a[i]); {
		case opt == "NX" && !o.XX:
			o.NX = true
		case opt == "XX" && !o.NX:
			o.XX = true
		case opt == "GET":
			o.Get = true
		case opt == "KEEPTTL" && !expiry:
			o.KeepTTL, expiry = true, true
		case (opt == "EX" || opt == "PX") && !expiry && !o.KeepTTL && i+1 < len(a):
			n, err := parseInt(a[i+1])
			if err != nil {
				return nil, err
			}
			if n <= 0 {
				return nil, cmdErr(errSyntax.code, "ERR invalid expire time in 'set' command")
			}
			unit := time.Millisecond
			if opt == "EX" {
				unit = time.Second
			}
			o.TTL, expiry = time.Duration(n)*unit, true
			i++
		default:
			return nil, errSyntax
		}
	}
	r, err := e.Set(ctx, a[0], a[1], o)
	switch {
	case err != nil:
		return nil, err
	case o.Get && r.OldOK:
		return r.Old, nil
	case o.Get || !r.Set:
		return nil, nil
	}
	return Status("OK"), nil
}

func (e *Engine) doDel(ctx context.Context, a []string) (any, error)    { return e.Del(ctx, a...) }
func (e *Engine) doExists(ctx context.Context, a []string) (any, error) { return e.Exists(ctx, a...) }
func (e *Engine) doPTTL(ctx context.Context, a []string) (any, error)   { return e.PTTL(ctx, a[0]) }
