package resp

import (
	"sort"
	"strings"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// commandInfo is one row of COMMAND INFO (Redis 7.0's shape): arity counts the name;
// first/last/step locate the keys.
type commandInfo struct {
	arity             int
	flags             []string
	first, last, step int
	summary, group    string
}

// commandTable lists every command the front serves, for COMMAND, COMMAND INFO,
// COUNT and DOCS (redis-cli and cluster-aware clients ask for them).
var commandTable = map[string]commandInfo{
	"XADD":       {-5, []string{"write", "denyoom", "fast"}, 1, 1, 1, "Appends a new entry to a stream.", "stream"},
	"XGROUP":     {-2, []string{}, 0, 0, 0, "Creates, destroys, moves and lists consumer groups and consumers.", "stream"},
	"XREADGROUP": {-7, []string{"write", "blocking"}, 0, 0, 0, "Reads entries of streams for a consumer group.", "stream"},
	"XREAD":      {-4, []string{"readonly", "blocking"}, 0, 0, 0, "Reads entries of streams after ids.", "stream"},
	"XACK":       {-4, []string{"write", "fast"}, 1, 1, 1, "Acknowledges entries of a group's pending list.", "stream"},
	"XPENDING":   {-3, []string{"readonly"}, 1, 1, 1, "Shows a group's pending list.", "stream"},
	"XCLAIM":     {-6, []string{"write", "fast"}, 1, 1, 1, "Changes the owner of pending entries.", "stream"},
	"XAUTOCLAIM": {-6, []string{"write", "fast"}, 1, 1, 1, "Claims idle pending entries from a cursor.", "stream"},
	"XDEL":       {-3, []string{"write", "fast"}, 1, 1, 1, "Deletes entries from a stream.", "stream"},
	"XTRIM":      {-4, []string{"write"}, 1, 1, 1, "Trims a stream by length or minimum id.", "stream"},
	"XLEN":       {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns the number of entries of a stream.", "stream"},
	"XRANGE":     {-4, []string{"readonly"}, 1, 1, 1, "Returns the entries of a stream in an id range.", "stream"},
	"XREVRANGE":  {-4, []string{"readonly"}, 1, 1, 1, "Returns the entries of a stream in an id range, newest first.", "stream"},
	"XINFO":      {-2, []string{}, 0, 0, 0, "Shows streams, groups and consumers.", "stream"},
	"DEL":        {-2, []string{"write"}, 1, -1, 1, "Deletes keys (streams and strings).", "generic"},
	"UNLINK":     {-2, []string{"write", "fast"}, 1, -1, 1, "Deletes keys (streams and strings).", "generic"},
	"EXISTS":     {-2, []string{"readonly", "fast"}, 1, -1, 1, "Counts existing keys.", "generic"},
	"TYPE":       {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns the type of a key.", "generic"},
	"TTL":        {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns the time to live of a key in seconds.", "generic"},
	"PTTL":       {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns the time to live of a key in milliseconds.", "generic"},
	"KEYS":       {2, []string{"readonly"}, 0, 0, 0, "Returns the keys (streams and strings) matching a glob.", "generic"},
	"SCAN":       {-2, []string{"readonly"}, 0, 0, 0, "Iterates over the keys (streams and strings) from a cursor.", "generic"},
	"DBSIZE":     {1, []string{"readonly", "fast"}, 0, 0, 0, "Returns the number of keys.", "server"},
	"MEMORY":     {-2, []string{}, 0, 0, 0, "Reports the bytes a key's rows take in the database.", "server"},
	"CONFIG":     {-2, []string{}, 0, 0, 0, "Returns the server's parameters (GET only).", "server"},
	"SET":        {-3, []string{"write", "denyoom"}, 1, 1, 1, "Sets a string key, with NX/XX and an expiry.", "string"},
	"GET":        {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns a string key's value.", "string"},
	"STRLEN":     {2, []string{"readonly", "fast"}, 1, 1, 1, "Returns the length of a string key's value.", "string"},
	"EVAL":       {-3, []string{"noscript"}, 0, 0, 0, "Runs one of the Redis transport's known scripts by its text.", "scripting"},
	"EVALSHA":    {-3, []string{"noscript"}, 0, 0, 0, "Runs one of the Redis transport's known scripts by its SHA1.", "scripting"},
	"SCRIPT":     {-2, []string{"noscript"}, 0, 0, 0, "Loads or checks the known scripts.", "scripting"},
	"AUTH":       {-2, []string{"noscript", "loading", "stale", "fast", "no_auth"}, 0, 0, 0, "Authenticates the connection.", "connection"},
	"HELLO":      {-1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, 0, 0, 0, "Handshakes, picks RESP2 or RESP3.", "connection"},
	"PING":       {-1, []string{"fast"}, 0, 0, 0, "Returns PONG.", "connection"},
	"ECHO":       {2, []string{"fast"}, 0, 0, 0, "Returns its argument.", "connection"},
	"QUIT":       {-1, []string{"fast", "no_auth"}, 0, 0, 0, "Closes the connection.", "connection"},
	"SELECT":     {2, []string{"loading", "stale", "fast"}, 0, 0, 0, "Selects database 0 (the only one).", "connection"},
	"CLIENT":     {-2, []string{}, 0, 0, 0, "Names, lists and unblocks connections.", "connection"},
	"INFO":       {-1, []string{"loading", "stale"}, 0, 0, 0, "Returns server information.", "server"},
	"COMMAND":    {-1, []string{"loading", "stale"}, 0, 0, 0, "Describes the commands served.", "server"},
}

func infoRow(name string, ci commandInfo) []any {
	flags := make([]any, len(ci.flags))
	for i, f := range ci.flags {
		flags[i] = engine.Status(f)
	}
	return []any{strings.ToLower(name), int64(ci.arity), flags, int64(ci.first), int64(ci.last), int64(ci.step),
		[]any{}, []any{}, []any{}, []any{}}
}

func sortedCommands() []string {
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// cmdCommand is COMMAND, COMMAND COUNT, COMMAND INFO [name ...], COMMAND DOCS
// [name ...] and COMMAND LIST.
func cmdCommand(_ *Server, c *client, args []string) {
	if len(args) == 1 {
		out := []any{}
		for _, n := range sortedCommands() {
			out = append(out, infoRow(n, commandTable[n]))
		}
		c.write(out)
		return
	}
	switch sub := strings.ToUpper(args[1]); sub {
	case "COUNT":
		c.write(int64(len(commandTable)))
	case "LIST":
		out := []any{}
		for _, n := range sortedCommands() {
			out = append(out, strings.ToLower(n))
		}
		c.write(out)
	case "INFO":
		names := args[2:]
		if len(names) == 0 {
			names = sortedCommands()
		}
		out := make([]any, 0, len(names))
		for _, n := range names {
			if ci, ok := commandTable[strings.ToUpper(n)]; ok {
				out = append(out, infoRow(n, ci))
			} else {
				out = append(out, engine.NilArray{})
			}
		}
		c.write(out)
	case "DOCS":
		names := args[2:]
		if len(names) == 0 {
			names = sortedCommands()
		}
		out := engine.Map{}
		for _, n := range names {
			if ci, ok := commandTable[strings.ToUpper(n)]; ok {
				out = append(out, strings.ToLower(n), engine.Map{"summary", ci.summary, "since", "1.0.0", "group", ci.group})
			}
		}
		c.write(out)
	default:
		c.writeErr(unknownSubcommand("command", args[1]))
	}
}
