package engine

import (
	"context"
	"strings"
)

// xgroupArity is each XGROUP subcommand's arity, counting "XGROUP" and the
// subcommand (Redis 7.0's command table).
var xgroupArity = map[string]int{"CREATE": -5, "SETID": -5, "DESTROY": 4, "CREATECONSUMER": 5, "DELCONSUMER": 5}

// doXGroup parses XGROUP's subcommands in t_stream.c xgroupCommand's order: the
// options of CREATE/SETID, then the key, then the group.
func (e *Engine) doXGroup(ctx context.Context, a []string) (any, error) {
	sub := strings.ToUpper(a[0])
	ar, ok := xgroupArity[sub]
	if !ok {
		return nil, cmdErr(errSyntax.code, "ERR unknown subcommand '%s'. Try XGROUP HELP.", a[0])
	}
	if n := len(a) + 1; (ar > 0 && n != ar) || (ar < 0 && n < -ar) {
		return nil, cmdErr(errSyntax.code, "ERR wrong number of arguments for 'xgroup|%s' command", strings.ToLower(sub))
	}
	subErr := cmdErr(errSyntax.code, "ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP.", a[0])
	mk := false
	var er int64 = -1
	if sub == "CREATE" || sub == "SETID" {
		for i := 4; i < len(a); {
			switch {
			case sub == "CREATE" && strings.EqualFold(a[i], "MKSTREAM"):
				mk = true
				i++
			case strings.EqualFold(a[i], "ENTRIESREAD") && i+1 < len(a):
				n, err := parseInt(a[i+1])
				if err != nil {
					return nil, err
				}
				if n < 0 && n != -1 {
					return nil, cmdErr(errSyntax.code, "ERR value for ENTRIESREAD must be positive or -1")
				}
				er = n
				i += 2
			default:
				return nil, subErr
			}
		}
		if (sub == "CREATE" && len(a) > 7) || (sub == "SETID" && len(a) != 4 && len(a) != 6) {
			return nil, subErr
		}
	}
	key, grp := a[1], a[2]
	switch sub {
	case "CREATE":
		if err := e.GroupCreate(ctx, key, grp, a[3], mk, er); err != nil {
			return nil, err
		}
		return Status("OK"), nil
	case "SETID":
		if err := e.GroupSetID(ctx, key, grp, a[3], er); err != nil {
			return nil, err
		}
		return Status("OK"), nil
	case "DESTROY":
		ok, err := e.GroupDestroy(ctx, key, grp)
		return boolInt(ok), err
	case "CREATECONSUMER":
		ok, err := e.CreateConsumer(ctx, key, grp, a[3])
		return boolInt(ok), err
	}
	return e.DelConsumer(ctx, key, grp, a[3])
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
