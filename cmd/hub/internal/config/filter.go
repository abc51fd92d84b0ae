package config

import (
	"errors"

	"github.com/koder/eventhub/filter"
)

// CheckFilter compiles a CESQL filter the way the hub will (routes[].filter, a source's
// filter) and reports a bad one at key, with the expression's own line:col in the
// message ("filter: 1:13: ..."), so lint points at the key and the problem inside it.
func CheckFilter(key, expr string) error {
	if _, err := filter.Compile(expr); err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) && fe.Line > 0 {
			return Field(key, "CESQL %d:%d: %s", fe.Line, fe.Col, fe.Msg)
		}
		return &FieldError{Key: key, Err: err}
	}
	return nil
}

// validateSourceFilters checks every source's filter (sources.<name>.filter).
func (c *Config) validateSourceFilters() error {
	var errs []error
	for _, name := range sortedKeys(c.Sources) {
		errs = append(errs, CheckFilter(name+".filter", c.Sources[name].Filter))
	}
	return errors.Join(errs...)
}

// validateTransportFilters refuses a filter on a transport section: transports take
// what routes send them; a route's filter (routes[].filter) narrows that.
func (c *Config) validateTransportFilters() error {
	var errs []error
	for _, name := range sortedKeys(c.Transports) {
		if c.Transports[name].Filter != "" {
			errs = append(errs, Field(name+".filter", "filters apply to sources and routes (routes[].filter), not transports"))
		}
	}
	return errors.Join(errs...)
}
