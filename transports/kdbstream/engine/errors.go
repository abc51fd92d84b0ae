package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams"
)

// Error is a command error with Redis's reply text ("ERR ...", "BUSYGROUP ...",
// "NOGROUP ..."), so the differential test compares it with the real server's reply and
// callers can branch on the prefix like they would with go-redis.
type Error struct {
	Msg  string
	code hub.ErrorCode
}

func (e *Error) Error() string { return e.Msg }

// HubCode classifies the error for hub.Code.
func (e *Error) HubCode() int { return int(e.code) }

// Prefix returns the first word of the reply ("ERR", "BUSYGROUP", "NOGROUP").
func (e *Error) Prefix() string { p, _, _ := strings.Cut(e.Msg, " "); return p }

func cmdErr(code hub.ErrorCode, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), code: code}
}

// Redis reply texts, copied from t_stream.c / server.c (Redis 7.0) so replies compare equal.
var (
	errInvalidID             = cmdErr(hub.InvalidArgument, "ERR Invalid stream ID specified as stream command argument")
	errInvalidStartExclusive = cmdErr(hub.InvalidArgument, "ERR invalid start ID for the interval")
	errInvalidEndExclusive   = cmdErr(hub.InvalidArgument, "ERR invalid end ID for the interval")
	errIDTooSmall            = cmdErr(hub.InvalidArgument, "ERR The ID specified in XADD is equal or smaller than the target stream top item")
	errIDZero                = cmdErr(hub.InvalidArgument, "ERR The ID specified in XADD must be greater than 0-0")
	errBusyGroup             = cmdErr(hub.AlreadyExists, "BUSYGROUP Consumer Group name already exists")
	errNoKeyForGroup         = cmdErr(hub.NotFound, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
	errSyntax                = cmdErr(hub.InvalidArgument, "ERR syntax error")
	errNotInteger            = cmdErr(hub.InvalidArgument, "ERR value is not an integer or out of range")
	errNoSuchKey             = cmdErr(hub.NotFound, "ERR no such key")
	errClosed                = cmdErr(hub.FailedPrecondition, "ERR engine closed")
	errSeqExhausted          = cmdErr(hub.InvalidArgument, "ERR Elements are too large to be stored")
)

func errNoGroup(stream, group, cmd string) *Error {
	if cmd == "" {
		return cmdErr(hub.NotFound, "NOGROUP No such key '%s' or consumer group '%s'", stream, group)
	}
	return cmdErr(hub.NotFound, "NOGROUP No such key '%s' or consumer group '%s' in %s", stream, group, cmd)
}

func errWrongArgs(cmd string) *Error {
	return cmdErr(hub.InvalidArgument, "ERR wrong number of arguments for '%s' command", strings.ToLower(cmd))
}

// IsBusyGroup reports whether err is XGROUP CREATE's "group exists" reply.
func IsBusyGroup(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Prefix() == "BUSYGROUP"
}

// IsNoGroup reports whether err is a NOGROUP reply.
func IsNoGroup(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Prefix() == "NOGROUP"
}

// Is makes a NOGROUP reply match streams.ErrNoGroup, so the shared consumer loop
// re-creates a group that disappeared, as it does on Redis.
func (e *Error) Is(target error) bool {
	return target == streams.ErrNoGroup && e.Prefix() == "NOGROUP"
}

// errNoSuchGroup is the XGROUP subcommands' and XINFO CONSUMERS' missing-group reply.
func errNoSuchGroup(stream, group string) *Error {
	return cmdErr(hub.NotFound, "NOGROUP No such consumer group '%s' for key name '%s'", group, stream)
}

var (
	errUnbalancedXRead = cmdErr(hub.InvalidArgument, "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
	errXReadGT         = cmdErr(hub.InvalidArgument, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
)

var errUnbalancedXReadGroup = cmdErr(hub.InvalidArgument, "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")

var errWrongType = cmdErr(hub.FailedPrecondition, "WRONGTYPE Operation against a key holding the wrong kind of value")

var (
	errTimeoutNotInteger = cmdErr(hub.InvalidArgument, "ERR timeout is not an integer or out of range")
	errTimeoutNegative   = cmdErr(hub.InvalidArgument, "ERR timeout is negative")
)
