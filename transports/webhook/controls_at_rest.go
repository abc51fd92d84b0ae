package webhook

import (
	"encoding/json"
	"sort"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/secrets"
)

// Static header values at rest. They are often credentials (an Authorization or API-key
// header the receiver checks), so with Config.Keyring they are stored like the signing
// secrets and the mTLS key: each value encrypted under the ring's primary key, bound to
// the endpoint (context "<id>/headers"), decrypted only when a worker builds a request;
// views show the names only. ReencryptSecrets moves them, and the TLS key, to a new
// primary key after a rotation, and encrypts the plaintexts of rows written before a
// key was configured.

func headersContext(id string) string { return id + "/headers" }
func tlsContext(id string) string     { return id + "/tls" }

// sealHeaders returns h with every value encrypted for endpoint id (h itself without a
// ring). A value already encrypted (a row read without opening) is kept.
func (s store) sealHeaders(id string, h map[string]string) (map[string]string, error) {
	if s.ring == nil || len(h) == 0 {
		return h, nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if secrets.IsEncrypted(v) {
			out[k] = v
			continue
		}
		ct, err := s.ring.Encrypt(v, headersContext(id))
		if err != nil {
			return nil, hub.Errorf(hub.Code(err), "webhook: endpoint %s: encrypt header %s: %w", id, k, err)
		}
		out[k] = ct
	}
	return out, nil
}

// openHeaders decrypts h in place; plaintexts (rows from before a key) pass through.
func (s store) openHeaders(id string, h map[string]string) error {
	for k, v := range h {
		if !secrets.IsEncrypted(v) {
			continue
		}
		if s.ring == nil {
			return hub.Errorf(hub.FailedPrecondition, "webhook: endpoint %s: its header values are encrypted and no secret key is configured", id)
		}
		pt, err := s.ring.Decrypt(v, headersContext(id))
		if err != nil {
			return hub.Errorf(hub.Code(err), "webhook: endpoint %s: header %s: %w", id, k, err)
		}
		h[k] = pt
	}
	return nil
}

// controlValues lists the encrypted-at-rest values of c in a fixed order (the TLS key,
// then the header values by name) with their contexts, and setControlValues puts
// values back in that order.
func controlValues(id string, c Controls) (values, contexts []string) {
	if c.TLS.ClientKey != "" {
		values, contexts = append(values, c.TLS.ClientKey), append(contexts, tlsContext(id))
	}
	for _, k := range sortedKeys(c.Headers) {
		values, contexts = append(values, c.Headers[k]), append(contexts, headersContext(id))
	}
	return values, contexts
}

func setControlValues(c *Controls, values []string) {
	i := 0
	if c.TLS.ClientKey != "" {
		c.TLS.ClientKey, i = values[0], 1
	}
	for _, k := range sortedKeys(c.Headers) {
		c.Headers[k] = values[i]
		i++
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// controlRows walks the controls column: per endpoint its TLS key and header values,
// each with its own context.
func controlRows(st store) columnRows {
	return columnRows{st: st, column: "controls",
		values: func(id, col string) ([]string, []string, error) {
			c, err := parseControls(id, col)
			values, contexts := controlValues(id, c)
			return values, contexts, err
		},
		replace: func(id, col string, values []string) (string, error) {
			c, err := parseControls(id, col)
			if err != nil {
				return "", err
			}
			setControlValues(&c, values)
			b, err := json.Marshal(c)
			return string(b), err
		}}
}

func parseControls(id, col string) (Controls, error) {
	var c Controls
	if err := json.Unmarshal([]byte(col), &c); err != nil {
		return c, hub.Errorf(hub.Internal, "webhook: endpoint %s: controls: %w", id, err)
	}
	return c, nil
}
