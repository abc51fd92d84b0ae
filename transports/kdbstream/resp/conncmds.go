package resp

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

var okReply = engine.Status("OK")

// connCommands are the connection commands clients send on connect and operators
// type; the stream and key commands go to the engine (engine.Do).
var connCommands map[string]func(s *Server, c *client, args []string)

func init() {
	connCommands = map[string]func(s *Server, c *client, args []string){
		"AUTH":    cmdAuth,
		"HELLO":   cmdHello,
		"PING":    cmdPing,
		"ECHO":    cmdEcho,
		"QUIT":    cmdQuit,
		"SELECT":  cmdSelect,
		"CLIENT":  cmdClient,
		"INFO":    cmdInfo,
		"COMMAND": cmdCommand,
		"CONFIG":  cmdConfig,
	}
}

// cmdHello is HELLO [protover [AUTH user pass] [SETNAME name]].
func cmdHello(s *Server, c *client, args []string) {
	proto := c.proto
	i := 1
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			c.writeErr(errNotInt)
			return
		}
		if n != 2 && n != 3 {
			c.writeErr(fmt.Errorf("NOPROTO unsupported protocol version"))
			return
		}
		proto, i = n, 2
	}
	authed, user, name := c.authed, "", ""
	for ; i < len(args); i++ {
		switch more := len(args) - i - 1; {
		case strings.EqualFold(args[i], "AUTH") && more >= 2:
			u, ok := s.authenticate(c, args[i+1], args[i+2])
			if !s.cfg.AuthRequired() {
				u, ok = args[i+1], args[i+1] == "default"
			}
			if !ok {
				c.writeErr(errWrongPass)
				return
			}
			authed, user = true, u
			i += 2
		case strings.EqualFold(args[i], "SETNAME") && more >= 1:
			if !validName(args[i+1]) {
				c.writeErr(errBadName)
				return
			}
			name = args[i+1]
			i++
		default:
			c.writeErr(fmt.Errorf("ERR Syntax error in HELLO option '%s'", args[i]))
			return
		}
	}
	if !authed {
		c.writeErr(errHelloAuth)
		return
	}
	c.authed, c.proto = true, proto
	c.mu.Lock()
	if user != "" {
		c.user = user
	}
	if name != "" {
		c.name = name
	}
	c.mu.Unlock()
	c.write(engine.Map{
		"server", "redis", "version", Version, "proto", int64(proto), "id", c.id,
		"mode", "standalone", "role", "master", "modules", []any{},
	})
}

func cmdPing(_ *Server, c *client, args []string) {
	switch len(args) {
	case 1:
		c.write(engine.Status("PONG"))
	case 2:
		c.write(args[1])
	default:
		c.writeErr(wrongArgs("ping"))
	}
}

func cmdEcho(_ *Server, c *client, args []string) {
	if len(args) != 2 {
		c.writeErr(wrongArgs("echo"))
		return
	}
	c.write(args[1])
}

func cmdQuit(_ *Server, c *client, _ []string) {
	c.write(okReply)
	c.quit = true
}

// cmdSelect accepts database 0 only: the engine has one keyspace.
func cmdSelect(_ *Server, c *client, args []string) {
	if len(args) != 2 {
		c.writeErr(wrongArgs("select"))
		return
	}
	n, err := strconv.Atoi(args[1])
	switch {
	case err != nil:
		c.writeErr(errNotInt)
	case n != 0:
		c.writeErr(fmt.Errorf("ERR DB index is out of range"))
	default:
		c.write(okReply)
	}
}

var errBadName = fmt.Errorf("ERR Client names cannot contain spaces, newlines or special characters.")

func validName(n string) bool {
	for _, r := range n {
		if r < '!' || r > '~' {
			return false
		}
	}
	return true
}

// cmdClient is CLIENT ID, SETNAME, GETNAME, SETINFO, INFO, LIST, UNBLOCK and
// NO-EVICT/NO-TOUCH (accepted: the engine neither evicts nor tracks access times).
func cmdClient(s *Server, c *client, args []string) {
	if len(args) < 2 {
		c.writeErr(wrongArgs("client"))
		return
	}
	sub := strings.ToUpper(args[1])
	arity := map[string]int{"ID": 2, "SETNAME": 3, "GETNAME": 2, "SETINFO": 4, "INFO": 2, "LIST": -2, "UNBLOCK": -3,
		"NO-EVICT": 3, "NO-TOUCH": 3}
	ar, ok := arity[sub]
	if !ok {
		c.writeErr(unknownSubcommand("client", args[1]))
		return
	}
	if (ar > 0 && len(args) != ar) || (ar < 0 && len(args) < -ar) {
		c.writeErr(fmt.Errorf("ERR wrong number of arguments for 'client|%s' command", strings.ToLower(sub)))
		return
	}
	switch sub {
	case "ID":
		c.write(c.id)
	case "SETNAME":
		if !validName(args[2]) {
			c.writeErr(errBadName)
			return
		}
		c.mu.Lock()
		c.name = args[2]
		c.mu.Unlock()
		c.write(okReply)
	case "GETNAME":
		c.mu.Lock()
		name := c.name
		c.mu.Unlock()
		if name == "" {
			c.write(nil)
			return
		}
		c.write(name)
	case "SETINFO":
		c.mu.Lock()
		defer c.mu.Unlock()
		switch strings.ToUpper(args[2]) {
		case "LIB-NAME":
			c.libName = args[3]
		case "LIB-VER":
			c.libVer = args[3]
		default:
			c.writeErr(fmt.Errorf("ERR Unrecognized option '%s'", args[2]))
			return
		}
		c.write(okReply)
	case "INFO":
		c.write(c.infoLine(s) + "\n")
	case "LIST":
		var b strings.Builder
		for _, o := range s.clientList() {
			b.WriteString(o.infoLine(s))
			b.WriteByte('\n')
		}
		c.write(b.String())
	case "UNBLOCK":
		clientUnblock(s, c, args)
	case "NO-EVICT", "NO-TOUCH":
		c.write(okReply)
	}
}

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if that client was blocked.
func clientUnblock(s *Server, c *client, args []string) {
	id, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		c.writeErr(errNotInt)
		return
	}
	cause := errUnblockTimeout
	if len(args) == 4 {
		switch strings.ToUpper(args[3]) {
		case "TIMEOUT":
		case "ERROR":
			cause = errUnblockError
		default:
			c.writeErr(fmt.Errorf("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"))
			return
		}
	} else if len(args) > 4 {
		c.writeErr(errSyntax)
		return
	}
	o := s.clientByID(id)
	if o != nil && o.unblockWith(cause) {
		c.write(int64(1))
		return
	}
	c.write(int64(0))
}

// infoLine is the client's CLIENT LIST line (the fields tools read).
func (c *client) infoLine(s *Server) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	flags := "N"
	if c.unblock != nil {
		flags = "b"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s name=%s age=%d db=0 flags=%s cmd=%s user=%s lib-name=%s lib-ver=%s resp=%d",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), c.name, int64(time.Since(c.created).Seconds()), flags,
		c.lastCmd, c.user, c.libName, c.libVer, c.proto)
}

// cmdInfo is INFO [section ...]: server, clients, persistence, replication, keyspace
// sections with the fields clients check on connect (ioredis waits for loading:0).
func cmdInfo(s *Server, c *client, args []string) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(a)] = true
	}
	all := len(want) == 0 || want["all"] || want["default"] || want["everything"]
	port := localPort(c)
	sections := []struct{ name, body string }{
		{"server", fmt.Sprintf("redis_version:%s\r\nredis_mode:standalone\r\nkdbstream:1\r\nkdbstream_driver:%s\r\nos:%s %s\r\narch_bits:64\r\nprocess_id:%d\r\ntcp_port:%s\r\nuptime_in_seconds:%d\r\n",
			Version, driverName(s), runtime.GOOS, runtime.GOARCH, os.Getpid(), port, int64(time.Since(s.started).Seconds()))},
		{"clients", fmt.Sprintf("connected_clients:%d\r\nblocked_clients:%d\r\n", len(s.clientList()), s.blocked.Load())},
		{"persistence", "loading:0\r\nasync_loading:0\r\n"},
		{"replication", "role:master\r\nconnected_slaves:0\r\n"},
		{"keyspace", ""},
	}
	var b strings.Builder
	for _, sec := range sections {
		if !all && !want[sec.name] {
			continue
		}
		if sec.name == "keyspace" {
			// Redis's db0 line, left out (as Redis does) when the keyspace is empty or
			// cannot be read: GUIs such as RedisInsight take the key count from it.
			if keys, expires, err := s.eng.Keyspace(c.ctx); err == nil && keys > 0 {
				sec.body = fmt.Sprintf("db0:keys=%d,expires=%d,avg_ttl=0\r\n", keys, expires)
			}
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec.name[:1]) + sec.name[1:] + "\r\n" + sec.body)
	}
	c.write(b.String())
}

func driverName(s *Server) string {
	if s.eng.Postgres() {
		return engine.DriverPostgres
	}
	return engine.DriverSQLite
}
