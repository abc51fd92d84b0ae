package redisstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	streamloop "github.com/koder/eventhub/internal/streams"
)

// redisErrorCodes maps the first word of a Redis error reply to a hub code. Sources:
// the Redis reference for each command (redis.io/docs/latest/commands) and
// src/server.c's shared error replies.
var redisErrorCodes = map[string]hub.ErrorCode{
	// Retrying later helps.
	"LOADING":     hub.Unavailable,       // the server is loading its dataset into memory
	"BUSY":        hub.Unavailable,       // a script is running past busy-reply-threshold
	"TRYAGAIN":    hub.Unavailable,       // cluster: multi-key request during resharding
	"CLUSTERDOWN": hub.Unavailable,       // cluster: the hash slot is not served
	"MASTERDOWN":  hub.Unavailable,       // replica with replica-serve-stale-data no
	"READONLY":    hub.Unavailable,       // writing to a replica; a failover is in progress
	"MOVED":       hub.Unavailable,       // cluster topology changed under us
	"ASK":         hub.Unavailable,       // cluster: slot migrating
	"OOM":         hub.ResourceExhausted, // maxmemory reached with a noeviction policy
	// Retrying does not help.
	"NOAUTH":     hub.PermissionDenied,   // AUTH required
	"WRONGPASS":  hub.PermissionDenied,   // bad user name or password
	"NOPERM":     hub.PermissionDenied,   // the ACL user lacks a command or key
	"NOGROUP":    hub.NotFound,           // XREADGROUP/XACK/XAUTOCLAIM: no such stream or group
	"BUSYGROUP":  hub.AlreadyExists,      // XGROUP CREATE of an existing group
	"WRONGTYPE":  hub.FailedPrecondition, // the key holds something other than a stream
	"CROSSSLOT":  hub.InvalidArgument,    // cluster: a MULTI spans two slots
	"NOSCRIPT":   hub.NotFound,           // EVALSHA of an unknown script
	"EXECABORT":  hub.Unknown,            // a queued command of MULTI failed
	"ERR":        hub.Unknown,            // the generic reply; its text varies by command
	"NOREPLICAS": hub.Unavailable,        // min-replicas-to-write not met
}

// classify wraps a go-redis error with its hub code (the transport's only error table;
// TestErrorCode pins it). Context errors pass through unwrapped.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *hub.Error
	if errors.As(err, &he) {
		return err
	}
	// Built directly: hub.Wrap leaves io.EOF unwrapped, but from go-redis an EOF means
	// the server closed the connection, which is an outage (Unavailable).
	return &hub.Error{Code: codeOf(err), Msg: err.Error(), Err: err}
}

func codeOf(err error) hub.ErrorCode {
	var rerr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		return hub.NotFound
	case errors.Is(err, redis.ErrClosed):
		return hub.FailedPrecondition // our own client was closed: using it again cannot work
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return hub.ResourceExhausted
	case errors.As(err, &rerr):
		if strings.Contains(rerr.Error(), "unauthenticated") {
			// "ERR Protocol error: unauthenticated multibulk length": a large request
			// before AUTH, which the server refuses (networking.c); an AUTH problem.
			return hub.PermissionDenied
		}
		word, _, _ := strings.Cut(rerr.Error(), " ")
		if code, ok := redisErrorCodes[word]; ok {
			return code
		}
		return hub.Unknown
	}
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	var rhe tls.RecordHeaderError
	var ce *tls.CertificateVerificationError
	switch {
	case errors.As(err, &uae), errors.As(err, &hne), errors.As(err, &cie), errors.As(err, &ce):
		return hub.PermissionDenied // the server's certificate is not trusted: a config problem
	case errors.As(err, &rhe):
		return hub.FailedPrecondition // TLS spoken to a plain-text server (or the reverse)
	}
	var nerr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return hub.Unavailable // the server is down, restarting or unreachable
	case errors.As(err, &nerr) && nerr.Timeout():
		return hub.Unavailable // no reply in time: treat as an outage, the hub retries
	case errors.As(err, new(*net.OpError)), errors.As(err, new(*net.DNSError)):
		return hub.Unavailable
	}
	return hub.Unknown
}

// readError classifies a group read error, marking a missing group or stream with
// streamloop.ErrNoGroup so the consumer loop re-creates it.
func readError(err error) error {
	if err != nil && redis.HasErrorPrefix(err, "NOGROUP") {
		return fmt.Errorf("%w: %w", streamloop.ErrNoGroup, classify(err))
	}
	return classify(err)
}
