package resp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Replies a client parses by their first word, with Redis's texts.
var (
	errNoAuth    = errors.New("NOAUTH Authentication required.")
	errWrongPass = errors.New("WRONGPASS invalid username-password pair or user is disabled.")
	errNoPass    = errors.New("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	errHelloAuth = errors.New("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
	errSyntax    = errors.New("ERR syntax error")
	errNotInt    = errors.New("ERR value is not an integer or out of range")
)

func wrongArgs(cmd string) error {
	return fmt.Errorf("ERR wrong number of arguments for '%s' command", strings.ToLower(cmd))
}

// unknownCommand is Redis's reply to a command it does not have.
func unknownCommand(args []string) error {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len()+len(a) > 128 {
			break
		}
		fmt.Fprintf(&b, "'%s' ", a)
	}
	return fmt.Errorf("ERR unknown command '%s', with args beginning with: %s", args[0], b.String())
}

func unknownSubcommand(cmd, sub string) error {
	return fmt.Errorf("ERR unknown subcommand '%s'. Try %s HELP.", sub, strings.ToUpper(cmd))
}

// commandError turns an engine or database error into a reply: the engine's command
// errors keep Redis's text; database trouble is "ERR kdbstream ..." with its class
// (a client retries Unavailable like a Redis failover's errors).
func commandError(err error) error {
	var ee *engine.Error
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errors.New("ERR kdbstream: command cancelled (connection or server closing)")
	}
	switch hub.Code(err) {
	case hub.Unavailable:
		return fmt.Errorf("TRYAGAIN kdbstream: database unavailable: %w", err)
	case hub.ResourceExhausted:
		return fmt.Errorf("ERR kdbstream: out of resources: %w", err)
	}
	return fmt.Errorf("ERR kdbstream: %w", err)
}
