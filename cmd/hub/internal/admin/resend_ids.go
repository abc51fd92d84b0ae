package admin

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/koder/eventhub/hub"
)

// deliveryID is one id of POST /deliveries/resend. GET /deliveries returns ids as JSON
// numbers (webhook.Delivery.ID), so resend takes them exactly so; the string form
// ("42") that earlier clients and `hub deliveries resend` send is accepted too.
type deliveryID int64

// UnmarshalJSON accepts a positive integer, bare or in a JSON string.
func (d *deliveryID) UnmarshalJSON(b []byte) error {
	raw := b
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		raw = []byte(s)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || n < 1 {
		return hub.Errorf(hub.InvalidArgument, "delivery id %s: want a delivery id as GET /deliveries lists it (a positive integer)", b)
	}
	*d = deliveryID(n)
	return nil
}

// joinIDs lists ids as the audit trail names the objects: "12,13".
func joinIDs(ids []deliveryID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(int64(id), 10)
	}
	return strings.Join(parts, ",")
}

var _ json.Unmarshaler = (*deliveryID)(nil)
