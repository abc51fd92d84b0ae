package webhook

import (
	"context"
	"testing"

	"github.com/koder/eventhub/hub"
)

// TestH4_EndpointURLPortIsATCPPort pins that an endpoint URL whose port is 0 or above
// 65535 is refused as InvalidArgument (the admin API's 400) at registration and at send,
// while the scheme's default (no port) and 1-65535 pass the static rules.
func TestH4_EndpointURLPortIsATCPPort(t *testing.T) {
	t.Parallel()
	g, err := newGuard([]string{"hooks.example"}, mapResolver{"hooks.example": {"93.184.216.34"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example/h", true},
		{"https://hooks.example:/h", true}, // empty port: the default
		{"https://hooks.example:1/h", true},
		{"https://hooks.example:443/h", true},
		{"https://hooks.example:08080/h", true},
		{"https://hooks.example:65535/h", true},
		{"https://hooks.example:0/h", false},
		{"https://hooks.example:00/h", false},
		{"https://hooks.example:65536/h", false},
		{"https://hooks.example:99999/h", false},
		{"https://hooks.example:18446744073709551617/h", false},
		{"http://[2606:4700::1111]:0/", false},
		{"http://93.184.216.34:70000/", false},
	} {
		_, serr := checkURL(c.url)
		_, gerr := g.CheckURL(context.Background(), c.url)
		for _, err := range []error{serr, gerr} {
			if c.ok && err != nil {
				t.Errorf("%s refused: %v", c.url, err)
			}
			if !c.ok && hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v (code %v), want InvalidArgument", c.url, err, hub.Code(err))
			}
		}
	}
}
