package engine

import (
	"context"
	"strconv"
	"strings"
)

// Do runs one Redis command given as words ("XADD", "s", "*", "k", "v") and returns the
// reply: nil (null bulk), int64, string, []any, or one of reply.go's shapes (Status,
// Map, StreamMap, NilArray); RESP2 turns it into what a RESP2 client sees. It is the
// command layer of the Redis protocol front (package resp) and what the differential
// test drives against a real Redis; applications use the typed methods.
//
// Blocking commands (XREAD, XREADGROUP with BLOCK) wait until ctx ends at most.
func (e *Engine) Do(ctx context.Context, args ...string) (any, error) {
	if len(args) == 0 {
		return nil, errSyntax
	}
	cmd := strings.ToUpper(args[0])
	a := args[1:]
	h, ok := commands[cmd]
	if !ok {
		return nil, cmdErr(errSyntax.code, "ERR unknown command '%s', with args beginning with: %s", args[0], argsPreview(a))
	}
	if (h.arity > 0 && len(args) != h.arity) || (h.arity < 0 && len(args) < -h.arity) {
		return nil, errWrongArgs(cmd)
	}
	return h.run(e, ctx, a)
}

// Commands lists the commands Do runs, upper case, in no order.
func Commands() []string {
	out := make([]string, 0, len(commands))
	for c := range commands {
		out = append(out, c)
	}
	return out
}

// IsCommand reports whether Do runs cmd (any case).
func IsCommand(cmd string) bool {
	_, ok := commands[strings.ToUpper(cmd)]
	return ok
}

// command is one entry of Do's table: Redis's arity (n: exactly n words with the name;
// -n: at least n) and the handler of the words after the name.
type command struct {
	arity int
	run   func(e *Engine, ctx context.Context, a []string) (any, error)
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"XADD":       {-5, (*Engine).doXAdd},
		"XGROUP":     {-2, (*Engine).doXGroup},
		"XREADGROUP": {-7, (*Engine).doXReadGroup},
		"XREAD":      {-4, (*Engine).doXRead},
		"XACK":       {-4, (*Engine).doXAck},
		"XPENDING":   {-3, (*Engine).doXPending},
		"XCLAIM":     {-6, (*Engine).doXClaim},
		"XAUTOCLAIM": {-6, (*Engine).doXAutoClaim},
		"XDEL":       {-3, (*Engine).doXDel},
		"XTRIM":      {-4, (*Engine).doXTrim},
		"XLEN":       {2, (*Engine).doXLen},
		"XRANGE":     {-4, (*Engine).doXRangeFwd},
		"XREVRANGE":  {-4, (*Engine).doXRevRange},
		"XINFO":      {-2, (*Engine).doXInfo},
		"DEL":        {-2, (*Engine).doDel},
		"UNLINK":     {-2, (*Engine).doDel},
		"EXISTS":     {-2, (*Engine).doExists},
		"TYPE":       {2, (*Engine).doType},
		"SET":        {-3, (*Engine).doSet},
		"GET":        {2, (*Engine).doGet},
		"STRLEN":     {2, (*Engine).doStrlen},
		"PTTL":       {2, (*Engine).doPTTL},
		"TTL":        {2, (*Engine).doTTL},
		"KEYS":       {2, (*Engine).doKeys},
		"SCAN":       {-2, (*Engine).doScan},
		"DBSIZE":     {1, (*Engine).doDBSize},
		"MEMORY":     {-2, (*Engine).doMemory},
	}
}

func (e *Engine) doXAck(ctx context.Context, a []string) (any, error) {
	return e.XAck(ctx, a[0], a[1], a[2:]...)
}
func (e *Engine) doXDel(ctx context.Context, a []string) (any, error) {
	return e.XDel(ctx, a[0], a[1:]...)
}
func (e *Engine) doXLen(ctx context.Context, a []string) (any, error) { return e.XLen(ctx, a[0]) }
func (e *Engine) doXRangeFwd(ctx context.Context, a []string) (any, error) {
	return e.doXRange(ctx, a, false)
}
func (e *Engine) doXRevRange(ctx context.Context, a []string) (any, error) {
	return e.doXRange(ctx, a, true)
}

// argsPreview is Redis's "with args beginning with:" list in its unknown-command error.
func argsPreview(a []string) string {
	var b strings.Builder
	for _, s := range a {
		if b.Len()+len(s) > 128 {
			break
		}
		b.WriteByte('\'')
		b.WriteString(s)
		b.WriteString("' ")
	}
	return b.String()
}

func idReply(id ID) any { return id.String() }

func fieldsReply(f []string) any {
	if f == nil {
		return NilArray{}
	}
	out := make([]any, len(f))
	for i, v := range f {
		out[i] = v
	}
	return out
}

// ParseXAdd parses XADD's words after the command name into an Add, with Redis's
// error replies (the Redis protocol front batches pipelined XADDs through Append).
func ParseXAdd(a []string) (Add, error) {
	if len(a) < 4 {
		return Add{}, errWrongArgs("xadd")
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
				return Add{}, err
			}
			add.Trim, i = t, j
			continue
		}
		break
	}
	if i >= len(a) {
		return Add{}, errWrongArgs("xadd")
	}
	add.ID = a[i]
	add.Values = a[i+1:]
	if len(add.Values) == 0 || len(add.Values)%2 != 0 {
		return Add{}, errWrongArgs("xadd")
	}
	if add.ID != "*" && !strings.HasSuffix(add.ID, "-*") {
		if _, err := ParseID(add.ID, 0); err != nil {
			return Add{}, err
		}
	}
	return add, nil
}

// AddReply renders one XADD's result as Do does: the id, or nil for NOMKSTREAM on a
// missing stream.
func AddReply(r AddResult) (any, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	if r.Nil {
		return nil, nil
	}
	return idReply(r.ID), nil
}

func (e *Engine) doXAdd(ctx context.Context, a []string) (any, error) {
	add, err := ParseXAdd(a)
	if err != nil {
		return nil, err
	}
	res, err := e.Append(ctx, []Add{add})
	if err != nil {
		return nil, err
	}
	return AddReply(res[0])
}

func (e *Engine) doXTrim(ctx context.Context, a []string) (any, error) {
	if !strings.EqualFold(a[1], "MAXLEN") && !strings.EqualFold(a[1], "MINID") {
		return nil, errSyntax
	}
	t, i, err := parseTrim(a, 1)
	if err != nil {
		return nil, err
	}
	if i != len(a) {
		return nil, errSyntax
	}
	return e.XTrim(ctx, a[0], *t)
}

func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errNotInteger
	}
	return n, nil
}
