package registry

// Noter is optionally implemented by modules that have something an operator checking a
// config should see besides problems: effective behaviour the file does not spell out,
// such as the retention a stream transport applies by default (R6, E8). `hub lint`
// prints the notes of a config that has no problem. Notes must be pure: no I/O.
type Noter interface {
	Notes() []string
}
