package watermill

import (
	"errors"
	"fmt"

	"github.com/koder/eventhub/hub"
)

// problems collects every invalid field of a config, each named by its YAML key, so a
// config checker (hub lint) reports them all at their lines.
type problems struct{ errs []error }

func (p *problems) add(field, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("watermill: %s: "+format, append([]any{field}, args...)...))
}

// err is nil without problems, else an InvalidArgument error joining them.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return hub.Wrap(hub.InvalidArgument, errors.Join(p.errs...))
}
