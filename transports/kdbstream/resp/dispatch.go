package resp

import (
	"context"
	"errors"
	"strings"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// maxXAddRun is the most pipelined XADDs the server collects before it appends them
// (a bound on what one connection holds back while the rest of a pipeline arrives).
const maxXAddRun = 1000

// serveConn reads and runs one connection's commands until it closes, QUIT or Close.
//
// The commands of a pipeline run in order and their replies go out in one write. Runs
// of consecutive XADDs go to the engine as one Append (one transaction: a pipeline of N
// XADDs costs one commit, one fsync, not N), each keeping its own reply. When the
// commands read so far end with XADDs and the next request has begun to arrive, the
// server reads on before appending, so a pipeline that arrives in several reads still
// becomes one Append; it never waits for bytes the client has not started sending.
func (s *Server) serveConn(c *client) {
	defer s.closedConn(c)
	var cmds [][]string
	for !c.quit {
		c.rd.unauthed = !c.authed
		var err error
		cmds, err = c.rd.read(cmds[:0])
		for err == nil && c.authed && c.rd.partial() {
			if n := trailingXAdds(cmds); n == 0 || n >= maxXAddRun {
				break
			}
			cmds, err = c.rd.read(cmds)
		}
		s.runAll(c, cmds)
		clear(cmds) // let the arguments go before the connection waits
		var pe *protocolError
		if errors.As(err, &pe) {
			c.writeErr(errors.New("ERR " + pe.Error()))
		}
		if ferr := c.flush(); ferr != nil || err != nil {
			return
		}
	}
}

// runAll runs cmds in order, consecutive XADDs as one Append.
func (s *Server) runAll(c *client, cmds [][]string) {
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
		s.run(c, cmds[i])
		i++
	}
}

// trailingXAdds counts the XADDs that end cmds.
func trailingXAdds(cmds [][]string) int {
	n := 0
	for i := len(cmds) - 1; i >= 0 && isXAdd(cmds[i]); i-- {
		n++
	}
	return n
}

func isXAdd(args []string) bool {
	return len(args) > 0 && len(args[0]) == 4 && strings.EqualFold(args[0], "XADD")
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
	if c.flush() != nil {
		return
	}
	c.out = nil // a parked client keeps neither buffer
	c.rd.release()
	ctx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	c.setBlocking(cancel)
	s.blocked.Add(1)
	stop := watchClose(c.nc, func() { cancel(context.Canceled) })
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
func (s *Server) xaddBatch(c *client, cmds [][]string) {
	replies := make([]any, len(cmds))
	adds := make([]engine.Add, 0, len(cmds))
	slot := make([]int, 0, len(cmds))
	for i, cmd := range cmds {
		a, err := engine.ParseXAdd(cmd[1:])
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
		s.appends.Add(1)
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
