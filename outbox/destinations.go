package outbox

import (
	"sync"

	"github.com/koder/eventhub/hub"
)

// Destinations is a Lookup whose entries can be added after the relay is built. The
// hub needs its Outbox at hub.New, before Forward names the routes; register each
// route's transport here under its route name (hub.WithName) as it is forwarded.
// Safe for concurrent use.
type Destinations struct {
	m sync.Map // name -> hub.Transport
}

// Set registers (or replaces) the transport of destination name.
func (d *Destinations) Set(name string, t hub.Transport) { d.m.Store(name, t) }

// Delete removes destination name; its rows then dead-letter as unknown.
func (d *Destinations) Delete(name string) { d.m.Delete(name) }

// Lookup is the Lookup to pass to New.
func (d *Destinations) Lookup(name string) (hub.Transport, bool) {
	v, ok := d.m.Load(name)
	if !ok {
		return nil, false
	}
	return v.(hub.Transport), true
}

var _ Lookup = (&Destinations{}).Lookup
