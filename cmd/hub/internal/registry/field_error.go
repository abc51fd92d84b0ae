package registry

import "fmt"

// FieldError is a Validate or Provision error about one key of the module's section, so
// `hub lint` points at that key's line instead of the section's.
type FieldError struct {
	Key string // the YAML key inside the module section, e.g. "stream"
	Err error
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %v", e.Key, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Field builds a FieldError.
func Field(key string, format string, args ...any) error {
	return &FieldError{Key: key, Err: fmt.Errorf(format, args...)}
}
