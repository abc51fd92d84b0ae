package cesdk_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	ce "github.com/cloudevents/sdk-go/v2/event"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/rabbitmq"
)

// The CloudEvents SDK has no AMQP 0-9-1 protocol (its AMQP binding,
// protocol/amqp/v2, is AMQP 1.0, which RabbitMQ does not speak natively, and it is not
// on the module proxy this project uses). TestCE_SDKReadsRabbitMQ therefore reads what
// the hub's RabbitMQ transport wrote with the SDK's own format and binding functions:
// format.JSON for structured mode, and the SDK's spec/binding machinery over a
// small binding.Message for the "cloudEvents:" header prefix of binary mode.
func TestCE_SDKReadsRabbitMQ(t *testing.T) {
	t.Parallel()
	url := testenv.RabbitURL(t)
	for _, mode := range []string{rabbitmq.ModeStructured, rabbitmq.ModeBinary} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			name := testenv.Name(t)
			conn, err := amqp.Dial(url)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			cfg := rabbitmq.Config{URL: url, Exchange: "cesdk." + name, Queue: "cesdk." + name, Mode: mode}
			t.Cleanup(func() {
				for _, q := range []string{cfg.Queue, cfg.Queue + ".retry", rabbitmq.DLQName(cfg.Queue)} {
					_, _ = ch.QueueDelete(q, false, false, false)
				}
				_ = ch.ExchangeDelete(cfg.Exchange, false, false)
				_ = conn.Close()
			})
			c, err := rabbitmq.NewConsumer(context.Background(), cfg) // declares the queue
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			tr, err := rabbitmq.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()

			ev := transporttest.FullEvent()
			ev.Source = "https://example.com/eventhub/test?x=1" // the SDK re-escapes URIs
			if err := tr.Send(context.Background(), []*cloudevent.Event{ev}); err != nil {
				t.Fatal(err)
			}
			var d amqp.Delivery
			testenv.WaitFor(t, 10*time.Second, "the message in the queue", func() bool {
				var ok bool
				d, ok, err = ch.Get(cfg.Queue, true)
				return err == nil && ok
			})

			var sdkEv ce.Event
			want := transporttest.JSONExtensions(ev)
			if mode == rabbitmq.ModeStructured {
				if err := format.JSON.Unmarshal(d.Body, &sdkEv); err != nil {
					t.Fatalf("SDK format.JSON: %v", err)
				}
			} else {
				e, err := binding.ToEvent(context.Background(), amqpMessage{&d})
				if err != nil {
					t.Fatalf("SDK binding.ToEvent: %v", err)
				}
				sdkEv = *e
				want = amqpTyped(ev)
			}
			got, err := cesdk.FromSDK(sdkEv)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s:\n%s", mode, transporttest.Diff(want, got))
			}
		})
	}
}

// amqpTyped is ev as the AMQP headers type it: boolean, int32, byte array and
// whole-second timestamps natively; URIs and sub-second timestamps as strings (the
// binding's eventhub-ce-types hint, which the SDK does not read, restores them for the
// hub's own decoder).
func amqpTyped(ev *cloudevent.Event) *cloudevent.Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		switch x := v.(type) {
		case cloudevent.URI, cloudevent.URIRef:
			c.Extensions[k], _ = cloudevent.FormatValue(v)
		case time.Time:
			if x.Nanosecond() != 0 {
				c.Extensions[k], _ = cloudevent.FormatValue(v)
			}
		}
	}
	return c
}

// amqpMessage is the smallest binding.Message over an AMQP 0-9-1 delivery in the
// hub's binary mode: "cloudEvents:"-prefixed headers (typed values passed as they are),
// content-type as datacontenttype, the body as data. The SDK's spec package does the
// attribute mapping.
type amqpMessage struct{ d *amqp.Delivery }

var amqpSpecs = spec.WithPrefix("cloudEvents:")

func (m amqpMessage) ReadEncoding() binding.Encoding { return binding.EncodingBinary }

func (m amqpMessage) ReadStructured(context.Context, binding.StructuredWriter) error {
	return binding.ErrNotStructured
}

func (m amqpMessage) ReadBinary(ctx context.Context, w binding.BinaryWriter) error {
	version := amqpSpecs.Version(m.d.Headers["cloudEvents:specversion"].(string))
	for k, v := range m.d.Headers {
		if !strings.HasPrefix(k, "cloudEvents:") || k == "cloudEvents:specversion" {
			continue
		}
		var err error
		if attr := version.Attribute(k); attr != nil {
			err = w.SetAttribute(attr, v)
		} else {
			err = w.SetExtension(strings.TrimPrefix(k, "cloudEvents:"), v)
		}
		if err != nil {
			return err
		}
	}
	if m.d.ContentType != "" {
		if err := w.SetAttribute(version.AttributeFromKind(spec.DataContentType), m.d.ContentType); err != nil {
			return err
		}
	}
	if len(m.d.Body) > 0 {
		return w.SetData(bytes.NewReader(m.d.Body))
	}
	return nil
}

func (m amqpMessage) Finish(error) error { return nil }

// GetAttribute and GetExtension make it a binding.MessageMetadataReader, which the SDK's
// transformers read through.
func (m amqpMessage) GetAttribute(k spec.Kind) (spec.Attribute, any) {
	version := amqpSpecs.Version(m.d.Headers["cloudEvents:specversion"].(string))
	attr := version.AttributeFromKind(k)
	if attr == nil {
		return nil, nil
	}
	return attr, m.d.Headers[attr.PrefixedName()]
}

func (m amqpMessage) GetExtension(name string) any { return m.d.Headers["cloudEvents:"+name] }
