package cloudevent

import (
	"errors"
	"strconv"
	"strings"
)

// invalidArgumentCode is hub.InvalidArgument. It is spelled as a number because hub
// imports this package, not the other way round; hub.Code reads it through hub.Coder.
const invalidArgumentCode = 3

// Problem is one thing wrong with an event: the attribute, extension or field it is
// about (CloudEvents name, or the R2 field name for DecodeFields) and what is wrong.
type Problem struct {
	Field   string
	Message string
}

// ValidationError lists every problem found in an event, not just the first, so a
// producer can fix all of them in one round trip. hub.Code classifies it as
// InvalidArgument; a consumer treats it as "malformed" (N2: dead-letter, never retry).
type ValidationError struct {
	Problems []Problem
}

// HubCode returns hub.InvalidArgument.
func (e *ValidationError) HubCode() int { return invalidArgumentCode }

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("cloudevent: invalid event: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Field != "" {
			b.WriteString(p.Field)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// Has reports whether some problem is about field.
func (e *ValidationError) Has(field string) bool {
	for _, p := range e.Problems {
		if p.Field == field {
			return true
		}
	}
	return false
}

// problems accumulates Problems; the zero value is ready to use and costs nothing
// while the event is valid.
type problems struct{ list []Problem }

func (p *problems) add(field, msg string) { p.list = append(p.list, Problem{field, msg}) }

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: p.list}
}

// merge appends the problems of err (a *ValidationError) with each field prefixed,
// or err's message as a problem of prefix when it is another error.
func (p *problems) merge(prefix string, err error) {
	if err == nil {
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		p.add(strings.TrimSuffix(prefix, "."), err.Error())
		return
	}
	for _, q := range ve.Problems {
		p.add(prefix+q.Field, q.Message)
	}
}

func indexPrefix(i int) string { return "[" + strconv.Itoa(i) + "]." }

// ErrTooLarge is matched (errors.Is) by every *TooLargeError.
var ErrTooLarge = errors.New("cloudevent: request body too large")

// TooLargeError reports a request body over the caller's limit. An HTTP ingress maps
// it to 413 Content Too Large (errors.Is(err, ErrTooLarge)). hub.Code classifies it as
// InvalidArgument, not ResourceExhausted: the hub retries the latter, and the same body
// stays too large however often it is sent.
type TooLargeError struct {
	Limit int64 // the limit in bytes
}

func (e *TooLargeError) Error() string {
	return "cloudevent: request body exceeds " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// HubCode returns hub.InvalidArgument.
func (e *TooLargeError) HubCode() int { return invalidArgumentCode }

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

var (
	_ error = (*ValidationError)(nil)
	_ error = (*TooLargeError)(nil)
)
