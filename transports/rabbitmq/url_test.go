package rabbitmq

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
)

func TestParseURL(t *testing.T) {
	t.Parallel()

	t.Run("EveryParameter", func(t *testing.T) {
		t.Parallel()
		cfg, err := ParseURL("amqps://u:p@rabbit:5671/vh?exchange=ex&mode=structured&mandatory=false&channels=2&max_in_flight=9" +
			"&confirm_timeout=3s&queue=q&patterns=user.*,order.%23&queue_type=quorum&prefetch=7&concurrency=3&max_retries=-1" +
			"&retry_delay=1m&drain_timeout=2s&consumer_name=svc&connect_in_background=true&dial_timeout=4s&reconnect_min=1s&reconnect_max=9s")
		if err != nil {
			t.Fatal(err)
		}
		f := false
		want := Config{URL: "amqps://u:p@rabbit:5671/vh", Exchange: "ex", Mode: ModeStructured, Mandatory: &f, Channels: 2, MaxInFlight: 9,
			ConfirmTimeout: 3 * time.Second, Queue: "q", Patterns: []string{"user.*", "order.#"}, QueueType: QueueQuorum, Prefetch: 7,
			Concurrency: 3, MaxRetries: -1, RetryDelay: time.Minute, DrainTimeout: 2 * time.Second, ConsumerName: "svc",
			ConnectInBackground: true, DialTimeout: 4 * time.Second, ReconnectMin: time.Second, ReconnectMax: 9 * time.Second}
		if !reflect.DeepEqual(cfg, want) {
			t.Fatalf("ParseURL =\n%+v\nwant\n%+v", cfg, want)
		}
		// Every yaml-tagged Config field has a parameter.
		typ := reflect.TypeFor[Config]()
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("yaml")
			if tag == "-" || tag == "url" {
				continue
			}
			if err := setParam(&Config{}, tag, "1"); err != nil && strings.Contains(err.Error(), "unknown") {
				t.Errorf("Config field %s (yaml %q) has no URL parameter", typ.Field(i).Name, tag)
			}
		}
	})

	t.Run("UnknownParameterIsAnErrorWithoutThePassword", func(t *testing.T) {
		t.Parallel()
		_, err := ParseURL("amqp://u:hunter2@h/?exchnage=x")
		if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), "exchnage") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("BadValuesAndSchemes", func(t *testing.T) {
		t.Parallel()
		for _, raw := range []string{"http://h/", "amqp://h/?prefetch=x", "amqp://h/?retry_delay=5", "amqp://h/?mandatory=maybe"} {
			if _, err := ParseURL(raw); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("ParseURL(%s) = %v, want InvalidArgument", raw, err)
			}
		}
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cfg := Config{URL: "amqp://u:topsecret@h/", Mode: "json", QueueType: "stream", Prefetch: 70000, Patterns: []string{"a..b"},
		RetryDelay: -time.Second}
	cfg.setDefaults()
	err := cfg.validateConsumer()
	if hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("Validate = %v, want InvalidArgument", err)
	}
	for _, field := range []string{"mode", "queue_type", "prefetch", "patterns[0]", "retry_delay", "queue"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("Validate error does not name %s: %v", field, err)
		}
	}
	if strings.Contains(err.Error(), "topsecret") {
		t.Errorf("Validate error shows the password: %v", err)
	}
}

// Not parallel: it sets an environment variable.
func TestOpen_EnvURL(t *testing.T) {
	t.Setenv(EnvURL, "")
	if _, err := Open(t.Context(), ""); hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), EnvURL) {
		t.Fatalf("Open(\"\") without %s = %v, want InvalidArgument naming it", EnvURL, err)
	}
	t.Setenv(EnvURL, "amqp://guest:pw@127.0.0.1:1/?dial_timeout=200ms")
	if _, err := Open(t.Context(), ""); hub.Code(err) != hub.Unavailable || strings.Contains(err.Error(), "pw@") {
		t.Fatalf("Open(\"\") with %s aimed at a closed port = %v, want Unavailable, redacted", EnvURL, err)
	}
}
