package modules

import (
	"github.com/koder/eventhub/cmd/hub/internal/registry"
	"github.com/koder/eventhub/streams"
)

// The Redis and kdbstream sources share their consumer configuration (the R4 loop is one
// piece of code, internal/streams), so they share its checks and defaults here too.

// provisionStreamSource fills defaults that depend on the section itself.
func provisionStreamSource(cc *streams.ConsumerConfig) {
	if cc.DefaultSource == "" {
		// An entry written by hand as in seed 000 has no source; CloudEvents needs one,
		// and the stream it came from is the honest answer.
		cc.DefaultSource = cc.Stream
	}
}

// validateStreamSource checks stream and group names (R1, R3) and the consumer options,
// each problem on its own key, without opening anything.
func validateStreamSource(cc streams.ConsumerConfig) []error {
	var errs []error
	if cc.Stream == "" {
		errs = append(errs, registry.Field("stream", "required"))
	} else if err := streams.ValidateStream(cc.Stream); err != nil {
		errs = append(errs, registry.Field("stream", "%v", err))
	}
	if cc.Group == "" {
		errs = append(errs, registry.Field("group", "required"))
	} else if err := streams.ValidateGroup(cc.Group); err != nil {
		errs = append(errs, registry.Field("group", "%v", err))
	}
	// The remaining options, with placeholder names so only their own problems show.
	cfg := cc
	cfg.Stream, cfg.Group = "s", "g-g"
	if cfg.Consumer == "" {
		cfg.Consumer = "c"
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// streamSourceConfig is the consumer configuration a started source runs with.
func streamSourceConfig(cc streams.ConsumerConfig, rt *registry.Runtime) streams.ConsumerConfig {
	cc.Logger, cc.Metrics = rt.Logger, rt.StreamMets
	if rt.Schemas != nil {
		cc.Versions = rt.Schemas
	}
	return cc
}

// sourceDLQStream is the group's dead-letter stream.
func sourceDLQStream(cc streams.ConsumerConfig) string {
	if cc.DLQStream != "" {
		return cc.DLQStream
	}
	return streams.DLQStreamFor(cc.Stream)
}
