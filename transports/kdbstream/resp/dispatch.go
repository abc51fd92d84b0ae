package resp

import (
	"context"
	"errors"
	"strings"

	"github.com/tidwall/redcon"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// handle runs the commands redcon read from one connection: cmd and the rest of its
// pipeline, in order. Runs of consecutive XADDs go to the engine as one Append (one
// transaction: a pipeline of N XADDs costs one commit, not N), each keeping its own
// reply; everything else runs one command at a time.
func (s *Server) handle(conn redcon.Conn, cmd redcon.Command) {
	c, ok := conn.Context().(*client)
	if !ok {
		conn.Close()
		return
	}
	cmds := []redcon.Command{cmd}
	if more := conn.ReadPipeline(); len(more) > 0 {
		cmds = append(cmds, more...)
	}
	for i := 0; i < len(cmds) && !c.quit; {
		if c.authed && isXAdd(cmds[i]) {
			j := i + 1
			for j < len(cmds) && isXAdd(cmds[j]) {
				j++
			}
			s.xaddBatch(c, cmds[i:j])
			i = j
			continue
		}
		s.run(c, words(cmds[i]))
		i++
	}
	if c.quit {
		conn.Close()
	}
}

func isXAdd(cmd redcon.Command) bool {
	return len(cmd.Args) > 0 && strings.EqualFold(string(cmd.Args[0]), "XADD")
}

// words copies a command's arguments (redcon's slices point into its read buffer).
func words(cmd redcon.Command) []string {
	out := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		out[i] = string(a)
	}
	return out
}

// noAuthAllowed are the commands an unauthenticated client may send.
var noAuthAllowed = map[string]bool{"AUTH": true, "HELLO": true, "QUIT": true}

// run executes one command and writes its reply.
func (s *Server) run(c *client, args []string) {
	if len(args) == 0 {
		return
	}
	name := strings.ToUpper(args[0])
	c.mu.Lock()
	c.lastCmd = strings.ToLower(name)
	c.mu.Unlock()
	if !c.authed && !noAuthAllowed[name] {
		c.writeErr(errNoAuth)
		return
	}
	if h, ok := connCommands[name]; ok {
		h(s, c, args)
		return
	}
	if h, ok := scriptCommands[name]; ok {
		h(s, c, args)
		return
	}
	if !engine.IsCommand(name) {
		c.writeErr(unknownCommand(args))
		return
	}
	ctx := c.ctx
	if name == "XREAD" || name == "XREADGROUP" {
		if hasBlock(args) {
			s.runBlocking(c, args)
			return
		}
	}
	v, err := s.eng.Do(ctx, args...)
	s.reply(c, v, err)
}

// reply writes a command's result.
func (s *Server) reply(c *client, v any, err error) {
	if err != nil {
		c.writeErr(commandError(err))
		return
	}
	c.write(v)
}

// hasBlock reports whether an XREAD/XREADGROUP has a BLOCK option (before STREAMS).
func hasBlock(args []string) bool {
	for _, a := range args[1:] {
		switch strings.ToUpper(a) {
		case "BLOCK":
			return true
		case "STREAMS":
			return false
		}
	}
	return false
}

// runBlocking runs a blocking read. Earlier pipelined replies are flushed first (the
// client may wait for them). While the engine waits, the connection is watched for
// the client going away (watch_unix.go), and CLIENT UNBLOCK may end the wait: with
// TIMEOUT the reply is the timeout's nil, with ERROR Redis's UNBLOCKED error.
func (s *Server) runBlocking(c *client, args []string) {
	_ = redcon.BaseWriter(c.conn).Flush()
	ctx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	c.setBlocking(cancel)
	s.blocked.Add(1)
	stop := watchClose(c.conn.NetConn(), func() { cancel(context.Canceled) })
	v, err := s.eng.Do(ctx, args...)
	stop()
	s.blocked.Add(-1)
	c.setBlocking(nil)
	switch cause := context.Cause(ctx); {
	case err == nil:
	case errors.Is(cause, errUnblockTimeout):
		v, err = engine.NilArray{}, nil
	case errors.Is(cause, errUnblockError):
		c.writeErr(errUnblockError)
		return
	}
	s.reply(c, v, err)
}

// xaddBatch runs consecutive pipelined XADDs as one engine Append.
func (s *Server) xaddBatch(c *client, cmds []redcon.Command) {
	replies := make([]any, len(cmds))
	adds := make([]engine.Add, 0, len(cmds))
	slot := make([]int, 0, len(cmds))
	for i, cmd := range cmds {
		a, err := engine.ParseXAdd(words(cmd)[1:])
		if err != nil {
			replies[i] = err
			continue
		}
		adds = append(adds, a)
		slot = append(slot, i)
	}
	c.mu.Lock()
	c.lastCmd = "xadd"
	c.mu.Unlock()
	if len(adds) > 0 {
		res, err := s.eng.Append(c.ctx, adds)
		for k, i := range slot {
			if err != nil {
				replies[i] = commandError(err)
				continue
			}
			v, rerr := engine.AddReply(res[k])
			if rerr != nil {
				replies[i] = commandError(rerr)
			} else {
				replies[i] = v
			}
		}
	}
	for _, r := range replies {
		if err, ok := r.(error); ok {
			c.writeErr(err)
			continue
		}
		c.write(r)
	}
}
