package watermill

import (
	"encoding/json"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Defaults of PubSubConfig: what a message that is not a CloudEvent becomes.
const (
	DefaultPlainSource = "/watermill"
	DefaultPlainType   = "watermill.message"
	DefaultPlainTenant = "watermill"
	// ExtMetadata is the extension carrying a message's other metadata (keys that are
	// not "ce_" attributes) as a JSON object of strings, so a Watermill application
	// gets back every key it set.
	ExtMetadata = "wmmetadata"
	// plainContentType is the data content type of a plain message's payload.
	plainContentType = "application/octet-stream"
)

// PubSubConfig configures the mapping of NewPublisher and NewSubscriber.
type PubSubConfig struct {
	// Source, Type and Tenant are given to messages published without CloudEvents
	// metadata: the payload becomes the data (application/octet-stream), the UUID the
	// id. Defaults "/watermill", "watermill.message" and "watermill" (C1 needs a tenant).
	Source string `yaml:"source"`
	Type   string `yaml:"type"`
	Tenant string `yaml:"tenant"`
}

func (c *PubSubConfig) setDefaults() {
	if c.Source == "" {
		c.Source = DefaultPlainSource
	}
	if c.Type == "" {
		c.Type = DefaultPlainType
	}
	if c.Tenant == "" {
		c.Tenant = DefaultPlainTenant
	}
}

// MessageToEvent maps any Watermill message onto an event: a CloudEvents message
// (either mode, see Decode) is that event; any other becomes one with cfg's source, type
// and tenant, the UUID as id (a new id when empty) and the payload as
// application/octet-stream data. Metadata other than the CloudEvents attributes travels
// in the ExtMetadata extension. A CloudEvents message that is malformed is an
// InvalidArgument error.
func MessageToEvent(msg *message.Message, cfg PubSubConfig) (*cloudevent.Event, error) {
	cfg.setDefaults()
	var ev *cloudevent.Event
	ce := isCloudEvent(msg)
	if ce {
		var err error
		if ev, err = Decode(msg); err != nil {
			return nil, err
		}
	} else {
		ev = &cloudevent.Event{
			ID: msg.UUID, Source: cfg.Source, SpecVersion: cloudevent.SpecVersion, Type: cfg.Type,
			Extensions: map[string]any{cloudevent.ExtTenantID: cfg.Tenant},
		}
		if ev.ID == "" {
			ev.ID = cloudevent.NewID()
		}
		if len(msg.Payload) > 0 {
			ev.DataContentType = plainContentType
			ev.Data = msg.Payload
		}
	}
	extra := map[string]string{}
	for k, v := range msg.Metadata {
		if ce && (strings.HasPrefix(k, cloudevent.MetaPrefix) || k == cloudevent.MetaExtTypes || k == MetaContentType) {
			continue
		}
		if k == MetaDeliveries {
			continue
		}
		extra[k] = v
	}
	if len(extra) > 0 {
		if _, taken := ev.Extensions[ExtMetadata]; taken {
			return nil, hub.Errorf(hub.InvalidArgument, "watermill: the event already has a %s extension", ExtMetadata)
		}
		b, err := json.Marshal(extra)
		if err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
		ev.SetExtension(ExtMetadata, string(b))
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	return ev, nil
}

// EventToMessage maps an event onto the message a Watermill subscriber receives: the
// binary CloudEvents message (UUID = id, payload = data, "ce_" metadata) with the keys
// of ExtMetadata restored as metadata of their own.
func EventToMessage(ev *cloudevent.Event) (*message.Message, error) {
	raw, has := ev.Extensions[ExtMetadata].(string)
	if has {
		ev = ev.Clone()
		delete(ev.Extensions, ExtMetadata)
		if len(ev.Extensions) == 0 {
			ev.Extensions = nil
		}
	}
	msg, err := Encode(ev, ModeBinary)
	if err != nil {
		return nil, err
	}
	if has {
		var extra map[string]string
		if err := json.Unmarshal([]byte(raw), &extra); err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "watermill: extension %s is not a JSON object of strings: %v", ExtMetadata, err)
		}
		for k, v := range extra {
			if _, clash := msg.Metadata[k]; !clash {
				msg.Metadata[k] = v
			}
		}
	}
	return msg, nil
}

func isCloudEvent(msg *message.Message) bool {
	if msg.Metadata.Get(cloudevent.MetaPrefix+"specversion") != "" {
		return true
	}
	return strings.HasPrefix(msg.Metadata.Get(MetaContentType), "application/cloudevents")
}
