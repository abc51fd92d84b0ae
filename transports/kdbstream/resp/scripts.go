package resp

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// The front runs no Lua. The hub's Redis transport (transports/redisstream) sends two
// scripts, each an atomic step of its dead-letter handling (streams.DeadLetterScript,
// streams.ReplayScript); the front knows their exact texts, answers EVALSHA for their SHA1s (and EVAL, SCRIPT LOAD, SCRIPT EXISTS
// for them), and runs each as one engine transaction with the same effect and reply:
//
//   - deadLetter: XADD KEYS[2] * ARGV[3..] and XACK KEYS[1] ARGV[1] ARGV[2]; reply the
//     new id (engine.DeadLetterID);
//   - replay: if KEYS[1] has entry ARGV[1], XADD KEYS[2] MAXLEN ~ ARGV[2] (no cap for "0")
//   - ARGV[3..] and XDEL KEYS[1] ARGV[1], reply the new id, else nil (engine.ReplayEntry).
//
// Any other script is refused with an error that says so (EVALSHA: NOSCRIPT, as for a
// script Redis does not have; EVAL and SCRIPT LOAD: "ERR ... not one of them"), never
// run approximately. The texts are the shared layer's, so the SHA1s always match what
// redisstream sends; the front's tests run that package's DLQ and consumer against it.
const (
	deadLetterScriptText = streams.DeadLetterScript
	replayScriptText     = streams.ReplayScript
)

type knownScript struct {
	text string
	run  func(s *Server, c *client, keys, argv []string) (any, error)
}

type scripts struct{ bySHA map[string]knownScript }

func newScripts() *scripts {
	sc := &scripts{bySHA: map[string]knownScript{}}
	for _, k := range []knownScript{{deadLetterScriptText, runDeadLetter}, {replayScriptText, runReplay}} {
		sc.bySHA[scriptSHA(k.text)] = k
	}
	return sc
}

func scriptSHA(text string) string {
	h := sha1.Sum([]byte(text))
	return hex.EncodeToString(h[:])
}

var (
	errNoScript      = fmt.Errorf("NOSCRIPT No matching script. Please use EVAL.")
	errUnknownScript = fmt.Errorf("ERR kdbstream runs no Lua: only the Redis transport's dead-letter and replay scripts are known (by their SHA1), and this script is not one of them")
)

var scriptCommands = map[string]func(s *Server, c *client, args []string){
	"EVAL":    cmdEval,
	"EVALSHA": cmdEval,
	"SCRIPT":  cmdScript,
}

// cmdEval is EVAL script numkeys key... arg... and EVALSHA sha1 numkeys key... arg...
func cmdEval(s *Server, c *client, args []string) {
	if len(args) < 3 {
		c.writeErr(wrongArgs(args[0]))
		return
	}
	n, err := strconv.Atoi(args[2])
	switch {
	case err != nil:
		c.writeErr(errNotInt)
		return
	case n < 0:
		c.writeErr(fmt.Errorf("ERR Number of keys can't be negative"))
		return
	case n > len(args)-3:
		c.writeErr(fmt.Errorf("ERR Number of keys can't be greater than number of args"))
		return
	}
	sha := strings.ToLower(args[1])
	if strings.EqualFold(args[0], "EVAL") {
		sha = scriptSHA(args[1])
	}
	k, ok := s.scripts.bySHA[sha]
	if !ok {
		if strings.EqualFold(args[0], "EVAL") {
			c.writeErr(errUnknownScript)
		} else {
			c.writeErr(errNoScript)
		}
		return
	}
	v, err := k.run(s, c, args[3:3+n], args[3+n:])
	s.reply(c, v, err)
}

// cmdScript is SCRIPT LOAD, EXISTS and FLUSH. The known scripts are built in: LOAD
// of one returns its SHA1, FLUSH has nothing loaded by clients to remove.
func cmdScript(s *Server, c *client, args []string) {
	if len(args) < 2 {
		c.writeErr(wrongArgs("script"))
		return
	}
	switch strings.ToUpper(args[1]) {
	case "LOAD":
		if len(args) != 3 {
			c.writeErr(fmt.Errorf("ERR wrong number of arguments for 'script|load' command"))
			return
		}
		sha := scriptSHA(args[2])
		if _, ok := s.scripts.bySHA[sha]; !ok {
			c.writeErr(errUnknownScript)
			return
		}
		c.write(sha)
	case "EXISTS":
		out := make([]any, 0, len(args)-2)
		for _, sha := range args[2:] {
			_, ok := s.scripts.bySHA[strings.ToLower(sha)]
			out = append(out, boolInt(ok))
		}
		c.write(out)
	case "FLUSH":
		c.write(okReply)
	default:
		c.writeErr(unknownSubcommand("script", args[1]))
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func runDeadLetter(s *Server, c *client, keys, argv []string) (any, error) {
	if len(keys) != 2 || len(argv) < 4 {
		return nil, fmt.Errorf("ERR the dead-letter script takes 2 keys and a group, an id and fields")
	}
	id, err := s.eng.DeadLetterID(c.ctx, keys[0], argv[0], argv[1], keys[1], argv[2:])
	if err != nil {
		return nil, err
	}
	return id.String(), nil
}

func runReplay(s *Server, c *client, keys, argv []string) (any, error) {
	if len(keys) != 2 || len(argv) < 4 {
		return nil, fmt.Errorf("ERR the replay script takes 2 keys and an id, a MAXLEN and fields")
	}
	maxLen, err := strconv.ParseInt(argv[1], 10, 64)
	if err != nil || maxLen < 0 {
		return nil, errNotInt
	}
	var trim *engine.Trim // "0": no cap (a per-category stream, E8)
	if maxLen > 0 {
		trim = &engine.Trim{Approx: true, MaxLen: maxLen, Limit: -1}
	}
	id, ok, err := s.eng.ReplayEntry(c.ctx, keys[0], argv[0], keys[1], trim, argv[2:])
	if err != nil || !ok {
		return nil, err
	}
	return id.String(), nil
}
