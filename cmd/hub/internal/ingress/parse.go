package ingress

import (
	"net/http"

	"github.com/koder/eventhub/cloudevent"
)

// ParseRequest decodes a request body into events (binary, structured or batch mode)
// with the CloudEvents HTTP binding of the cloudevent package.
func ParseRequest(h http.Header, body []byte) ([]*cloudevent.Event, error) {
	return cloudevent.FromHTTP(h, body)
}
