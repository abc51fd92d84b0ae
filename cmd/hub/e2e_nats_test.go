package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cejs "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	sdk "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/watermill/natsjs"
)

// TestWM_NATSEndToEnd runs the real binary with a nats source and a nats transport:
// the CloudEvents SDK's NATS JetStream sender writes an event into the input stream,
// the hub's durable consumer takes it (schema-checked), and the hub publishes it to the
// output stream, where it arrives in the NATS binding with the same id and data.
func TestWM_NATSEndToEnd(t *testing.T) {
	t.Parallel()
	url := testenv.NATSURL(t)
	name := testenv.Name(t)
	in, out := "IN_"+name, "OUT_"+name
	inSubj, outSubj := "in_"+name, "out_"+name
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range []string{in, in + natsjs.DeadLetterStreamSuffix, out} {
			_ = js.DeleteStream(ctx, s)
		}
		nc.Close()
	})
	admin := freeAddr(t)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
sources:
  from_nats:
    type: nats
    url: %[1]s
    stream: %[2]s
    subject: %[3]s
    durable: hub-ingest
transports:
  to_nats:
    type: nats
    url: %[1]s
    stream: %[4]s
    subject: %[5]s
routes:
  - pattern: "#"
    to: to_nats
admin:
  listen: %[6]s
`, url, in, inSubj, out, outSubj, admin))
	p := startHub(t, cfg, admin)
	ctx := testenv.Context(t, time.Minute)

	ev := cloudevent.New("/e2e", "identity.user.erased").SetTenantID("acme")
	_ = ev.SetData("application/json", map[string]string{"erasure_id": "era_n", "user_id": "u4"})
	sender, err := cejs.NewSenderFromConn(nc, in, inSubj+"."+ev.Type, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := sdk.NewClient(sender)
	if err != nil {
		t.Fatal(err)
	}
	sev, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	if res := client.Send(ctx, sev); !sdk.IsACK(res) {
		t.Fatalf("SDK send: %v", res)
	}

	var got *jetstream.RawStreamMsg
	testenv.WaitFor(t, 30*time.Second, "the event in the output stream", func() bool {
		s, err := js.Stream(ctx, out)
		if err != nil {
			return false
		}
		m, err := s.GetMsg(ctx, 1)
		if err != nil {
			return false
		}
		got = m
		return true
	})
	if got.Subject != outSubj+"."+ev.Type || got.Header.Get("ce-id") != ev.ID || got.Header.Get("ce-tenantid") != "acme" ||
		string(got.Data) != string(ev.Data) {
		t.Fatalf("output message: subject %s headers %v data %s\n%s", got.Subject, got.Header, got.Data, p.log())
	}
	if strings.Contains(p.log(), `"level":"ERROR"`) {
		t.Errorf("errors in the hub log:\n%s", p.log())
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, p.log())
	}
}
