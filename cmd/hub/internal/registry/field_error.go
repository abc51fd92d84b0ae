package registry

import "github.com/koder/eventhub/cmd/hub/internal/config"

// FieldError is a Validate or Provision error about one key of the module's section, so
// `hub lint` points at that key's line instead of the section's. It is the config
// sections' own FieldError: modules and the file's sections locate problems alike.
type FieldError = config.FieldError

// Field builds a FieldError.
func Field(key string, format string, args ...any) error { return config.Field(key, format, args...) }
