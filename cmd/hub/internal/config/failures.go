package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/koder/eventhub/streams"
)

// Defaults of the failures section.
const (
	// DefaultFailureStream is the kdbstream stream, on the store, that records
	// hub.transport.failed events when failures.to is not set (F1).
	DefaultFailureStream = "hub.failures"
	// FailuresOff as failures.to records failure events nowhere outside the process
	// (they are still logged as event_dlq, counted and given to in-process subscribers).
	FailuresOff = "off"
)

// Failures says where the binary records the hub.transport.failed event of each event
// whose direct delivery failed for good (F1: `events.transport` of seed 002). Each one
// keeps the tenantid and correlationid of the event that failed.
type Failures struct {
	// To names the transport (a key of transports) that records them, or "off". Default:
	// the store's kdbstream stream Stream, when there is a store; without a store and
	// without To they are only logged and counted. A transport that a direct route
	// sends to cannot be the sink: its own failures could not be recorded on it.
	To string `yaml:"to"`
	// Stream is the kdbstream stream of the default sink. Default hub.failures.
	Stream string `yaml:"stream"`
}

// FailureSink is what a failures section resolves to.
type FailureSink struct {
	Transport string // a configured transport's name, or ""
	Stream    string // the store's kdbstream stream of the default sink, or ""
}

// Sink resolves the section against the store: at most one of the fields is set, none
// when failures are not recorded outside the process.
func (c *Config) Sink() FailureSink {
	f := c.Failures
	switch {
	case strings.EqualFold(f.To, FailuresOff):
		return FailureSink{}
	case f.To != "":
		return FailureSink{Transport: f.To}
	case !c.Store.Configured():
		return FailureSink{}
	case f.Stream != "":
		return FailureSink{Stream: f.Stream}
	}
	return FailureSink{Stream: DefaultFailureStream}
}

func (c *Config) validateFailures() error {
	f := c.Failures
	var errs []error
	switch {
	case strings.EqualFold(f.To, FailuresOff):
		if f.Stream != "" {
			errs = append(errs, Field("stream", "failures.to is off: nothing is written to a stream"))
		}
	case f.To != "":
		if _, ok := c.Transports[f.To]; !ok {
			known := sortedKeys(c.Transports)
			errs = append(errs, Field("to", "unknown transport %q%s (defined: %s; or %q)", f.To, DidYouMean(f.To, known), strings.Join(known, ", "), FailuresOff))
		}
		if f.Stream != "" {
			errs = append(errs, Field("stream", "stream names the default sink's stream; transport %q writes where its own section says", f.To))
		}
		if i, ok := c.directRouteTo(f.To); ok {
			errs = append(errs, Field("to", "transport %q is the target of direct route routes[%d] (%q): when it fails, its failure events cannot be recorded on it; name another transport, or leave failures.to unset for the store's %s stream",
				f.To, i, c.Routes[i].Pattern, DefaultFailureStream))
		}
	case f.Stream != "":
		if !c.Store.Configured() {
			errs = append(errs, Field("stream", "the default failure sink is a kdbstream stream on the store: set store.sqlite or store.postgres, or failures.to"))
		} else if err := streams.ValidateStream(f.Stream); err != nil {
			errs = append(errs, Field("stream", "%s", strings.TrimPrefix(err.Error(), "streams: ")))
		}
	}
	return errors.Join(errs...)
}

// directRouteTo returns the first direct route that sends to transport name.
func (c *Config) directRouteTo(name string) (int, bool) {
	for i, r := range c.Routes {
		if r.Delivery != DeliveryDirect && r.Delivery != "" {
			continue
		}
		for _, to := range r.To {
			if to == name {
				return i, true
			}
		}
	}
	return 0, false
}

// String describes the sink for logs.
func (s FailureSink) String() string {
	switch {
	case s.Transport != "":
		return "transports." + s.Transport
	case s.Stream != "":
		return fmt.Sprintf("store stream %s", s.Stream)
	}
	return "none"
}
