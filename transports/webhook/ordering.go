package webhook

import "github.com/koder/eventhub/hub"

// OnDead says what a dead delivery does to the ordered deliveries of its key behind it.
type OnDead string

const (
	// OnDeadSkip: a dead delivery no longer blocks its key; the next one goes. The
	// dead one stays for inspection and resend (a resent one is delivered out of order).
	OnDeadSkip OnDead = "skip"
	// OnDeadHold: the key stays blocked until the dead delivery is resent and
	// delivered (or deleted); nothing of that key overtakes it. The default.
	OnDeadHold OnDead = "hold"
)

// Ordering makes an endpoint's deliveries of one ordering key go strictly one after
// the other, in fan-out order.
type Ordering struct {
	// Enabled turns ordering on.
	Enabled bool `json:"enabled,omitempty"`
	// Key names what orders: "subject" (the default) or the name of an extension
	// attribute. Events without a value form one key of their own ("").
	Key string `json:"key,omitempty"`
	// OnDead: hold (default) or skip.
	OnDead OnDead `json:"on_dead,omitempty"`
}

func (o Ordering) validate() error {
	if !o.Enabled && (o.Key != "" || o.OnDead != "") {
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering: key and on_dead need enabled: true")
	}
	switch o.OnDead {
	case "", OnDeadSkip, OnDeadHold:
	default:
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering.on_dead %q: skip or hold", o.OnDead)
	}
	if o.Key != "" && o.Key != "subject" && !validExtensionName(o.Key) {
		return hub.Errorf(hub.InvalidArgument, "webhook: ordering.key %q: subject or an extension name (a-z, 0-9, at most 20)", o.Key)
	}
	return nil
}

func validExtensionName(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
