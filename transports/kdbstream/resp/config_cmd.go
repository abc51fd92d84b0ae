package resp

import (
	"fmt"
	"net"
	"strings"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// configParams are the parameters CONFIG GET answers: the ones clients, GUIs and ops
// scripts read to learn what kind of server they talk to (RedisInsight asks for
// databases; scripts check maxmemory and the eviction policy), each with the value
// that is true of the front. A parameter whose Redis meaning has no counterpart here
// (save, appendonly, requirepass, ...) is not listed, so a pattern naming it matches
// nothing, as an unknown parameter does in Redis.
type configParam struct{ name, value string }

var configParams = []configParam{
	{"databases", "1"},
	{"maxmemory", "0"},
	{"maxmemory-policy", "noeviction"},
	{"notify-keyspace-events", ""},
	{"proto-max-bulk-len", "536870912"},
	{"stream-node-max-entries", "100"},
	{"timeout", "0"},
}

// cmdConfig is CONFIG GET parameter [parameter ...] (glob patterns, case-insensitive,
// as in Redis 7) and CONFIG HELP. CONFIG SET, REWRITE and RESETSTAT are refused: the
// front's settings come from the hub's configuration file.
func cmdConfig(_ *Server, c *client, args []string) {
	if len(args) < 2 {
		c.writeErr(wrongArgs("config"))
		return
	}
	switch sub := strings.ToUpper(args[1]); sub {
	case "GET":
		if len(args) < 3 {
			c.writeErr(wrongArgs("config|get"))
			return
		}
		params := append(configParams[:len(configParams):len(configParams)],
			configParam{"bind", localHost(c)}, configParam{"port", localPort(c)})
		out := engine.Map{}
		for _, p := range params {
			for _, pat := range args[2:] {
				if engine.GlobMatch(pat, p.name, true) {
					out = append(out, p.name, p.value)
					break
				}
			}
		}
		c.write(out)
	case "SET", "REWRITE", "RESETSTAT":
		c.writeErr(fmt.Errorf("ERR CONFIG %s is not supported: this server's settings come from the hub's configuration file", sub))
	case "HELP":
		c.write([]any{
			"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"GET <pattern> [<pattern> ...]",
			"    Return parameters matching the glob-like <pattern>s and their values.",
			"HELP",
			"    Print this help.",
		})
	default:
		c.writeErr(unknownSubcommand("config", args[1]))
	}
}

// localHost and localPort split the connection's local address (CONFIG GET bind and
// port, INFO's tcp_port).
func localHost(c *client) string { h, _ := splitLocal(c); return h }

func localPort(c *client) string { _, p := splitLocal(c); return p }

func splitLocal(c *client) (host, port string) {
	if a := c.nc.LocalAddr(); a != nil {
		host, port, _ = net.SplitHostPort(a.String())
	}
	return host, port
}
