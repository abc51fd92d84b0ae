package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldError is a validation error about one key below the section being validated
// ("level" in log, "[2].to[1]" in routes, "url" in a module), so the problem is printed
// at that key's line instead of the section's. Validators return several joined with
// errors.Join, one per problem.
type FieldError struct {
	Key string // relative to the section: "url", "retry.attempts", "[0].pattern"
	Err error
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %v", e.Key, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Field builds a FieldError.
func Field(key string, format string, args ...any) error {
	return &FieldError{Key: key, Err: fmt.Errorf(format, args...)}
}

// ProblemsAt turns a section's validation error into located problems, one per part
// of an errors.Join (found anywhere in err's chain: libraries wrap their joined errors
// in a hub.Error). A FieldError is placed at its key. Any other part is a library's
// error that names the Go field it rejects ("MaxAttempts" for max_attempts): it is
// placed at the key of the section's mapping it names first, else at the section.
// prefix (a stage such as "provision") starts each message when set; a FieldError's
// message then keeps its key.
func (f *File) ProblemsAt(path, prefix string, err error) Problems {
	var ps Problems
	for _, e := range SplitJoined(err) {
		msg := e.Error()
		if prefix != "" {
			msg = prefix + ": " + msg
		}
		var fe *FieldError
		if errors.As(e, &fe) {
			// the key is where the problem is printed; the message need not repeat it
			msg = strings.TrimPrefix(msg, fe.Key+": ")
		}
		at := path
		if fe != nil {
			at = joinKey(path, fe.Key)
		} else if key := f.mentionedPresent(path, msg); key != "" {
			at = joinKey(path, key)
		}
		ps = append(ps, f.Problem(at, "%s", msg))
	}
	return ps
}

// SplitJoined finds an errors.Join inside err's chain and returns its parts
// (recursively), or err alone; nil gives none.
func SplitJoined(err error) []error {
	if err == nil {
		return nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			var out []error
			for _, part := range j.Unwrap() {
				out = append(out, SplitJoined(part)...)
			}
			return out
		}
	}
	return []error{err}
}

// mentionedPresent is the key of the mapping at path that msg names first, or "".
func (f *File) mentionedPresent(path, msg string) string {
	n := f.Node(path)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	_, key := MentionedKey(n, msg)
	return key
}

// joinKey appends a relative key to a path: "routes" + "[0].to" is "routes[0].to".
func joinKey(path, key string) string {
	if path == "" || strings.HasPrefix(key, "[") {
		return path + key
	}
	return path + "." + key
}
