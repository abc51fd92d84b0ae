package engine

import (
	"strconv"
)

// extra draws the commands the differential sequence gained with the Redis protocol
// front: XREAD (several streams, "$", missing keys), XREVRANGE, XRANGE COUNT 0, the
// XGROUP subcommands besides CREATE, XINFO CONSUMERS, multi-stream XREADGROUP,
// XADD NOMKSTREAM, and the string commands (EXISTS, SET NX EX, GET, TYPE, DEL, also
// on the stream's key, so the keyspace is shared as in Redis). The stream itself is
// deleted rarely, so most of the sequence runs on a populated stream.
func (g *gen) extra() []string {
	k, k2, ks := g.key, g.key+":b", g.key+":str"
	switch p := g.r.IntN(40); {
	case p < 2:
		return []string{"XLEN", k}
	case p < 6:
		cmd := []string{"XREAD"}
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, "COUNT", strconv.Itoa(g.r.IntN(5)))
		}
		if g.r.IntN(2) == 0 {
			return append(cmd, "STREAMS", k, g.anyID())
		}
		return append(cmd, "STREAMS", k, k2, []string{"0", g.anyID(), "$"}[g.r.IntN(3)], "0-0")
	case p < 9:
		cmd := []string{"XREVRANGE", k, []string{"+", g.anyID(), "(" + g.anyID()}[g.r.IntN(3)], []string{"-", g.anyID()}[g.r.IntN(2)]}
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, "COUNT", strconv.Itoa(g.r.IntN(6)))
		}
		return cmd
	case p < 10:
		return []string{"XRANGE", k, "-", "+", "COUNT", "0"}
	case p < 13:
		cmd := []string{"XGROUP", "SETID", k, g.pick(g.groups), []string{"$", "0", g.anyID()}[g.r.IntN(3)]}
		if g.r.IntN(3) == 0 {
			cmd = append(cmd, "ENTRIESREAD", strconv.Itoa(g.r.IntN(20)))
		}
		return cmd
	case p < 14:
		return []string{"XGROUP", "DESTROY", k, g.pick(g.groups)}
	case p < 17:
		return []string{"XGROUP", "CREATECONSUMER", k, g.pick(g.groups), g.pick(append(g.cons, "dave"))}
	case p < 19:
		return []string{"XGROUP", "DELCONSUMER", k, g.pick(g.groups), g.pick(append(g.cons, "dave"))}
	case p < 23:
		return []string{"XINFO", "CONSUMERS", k, g.pick(append(g.groups, "nogroup"))}
	case p < 25:
		return []string{"XREADGROUP", "GROUP", g.pick(g.groups), g.pick(g.cons), "COUNT", strconv.Itoa(1 + g.r.IntN(3)), "STREAMS", k, k2, ">", []string{">", "0"}[g.r.IntN(2)]}
	case p < 27:
		g.ms++
		return []string{"XADD", k2, "NOMKSTREAM", strconv.FormatInt(g.ms, 10) + "-0", "b", "1"}
	case p < 28:
		return []string{"XGROUP", "CREATE", k2, g.pick(g.groups), "0", "MKSTREAM"}
	case p < 31:
		return []string{"EXISTS", k, ks, k2, ks}
	case p < 34:
		cmd := []string{"SET", ks, strconv.Itoa(g.r.IntN(100))}
		switch g.r.IntN(4) {
		case 0:
			cmd = append(cmd, "NX", "EX", "3600")
		case 1:
			cmd = append(cmd, "XX")
		case 2:
			cmd = append(cmd, "GET")
		}
		return cmd
	case p < 36:
		return []string{[]string{"GET", "TYPE", "STRLEN"}[g.r.IntN(3)], []string{ks, k, k2}[g.r.IntN(3)]}
	case p < 37:
		return []string{"DEL", ks}
	case p < 38:
		return []string{"TTL", ks}
	case p < 39:
		// Rare: the stream goes, with its groups; MKSTREAM and XADD bring it back.
		if g.r.IntN(4) == 0 {
			return []string{"DEL", k, k2}
		}
		return []string{"XGROUP", "CREATE", ks, "ga", "$", "MKSTREAM"} // WRONGTYPE while the string lives
	}
	return []string{"XINFO", "GROUPS", k2}
}
