package cli

import (
	"errors"
	"fmt"
)

// Exit codes: scripts branch on these, so they never change meaning.
const (
	ExitOK          = 0 // success
	ExitInvalid     = 1 // lint problems, an invalid event, a schema check that failed
	ExitUsage       = 2 // bad flags or arguments
	ExitUnavailable = 3 // a service, the ingress or the admin API cannot be reached; start failed
	ExitNotFound    = 4 // the admin API answered 404 (no such endpoint, delivery, DLQ entry)
	ExitDenied      = 5 // the admin API refused the token (401/403)
	ExitFailure     = 6 // anything else
)

// exitError carries an exit code out of a cobra command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// silent is an exit code whose message was already printed (lint problems).
func silent(code int) error { return &exitError{code: code, err: errSilent} }

var errSilent = errors.New("")

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitFailure
}

const exitCodesHelp = `Exit codes:
  0  success
  1  invalid: lint problems, a rejected event or request (a 4xx other than 401, 403
     and 404), a failed schema check, hub init onto an existing file
  2  usage: bad flags or arguments
  3  unavailable: a service, the ingress or the admin API cannot be reached or is
     unavailable (503); start failed
  4  not found: the admin API has no such object
  5  denied: the admin API refused the token
  6  any other failure`
