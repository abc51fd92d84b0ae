package app_test

import (
	"strings"
	"testing"
)

// TestLintNATSAndWatermill pins where problems of the nats and watermill modules are
// reported, as TestLintModules does for the others.
func TestLintNATSAndWatermill(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		vars map[string]string
		want []string
	}{
		{"NATSURLFromEnvironment",
			"transports:\n  n:\n    type: nats\n    stream: EVENTS\n",
			map[string]string{"NATS_URL": "nats://127.0.0.1:4222"}, nil},
		{"NATSWithoutURL",
			"transports:\n  n:\n    type: nats\n    stream: EVENTS\n",
			nil, []string{`hub.yaml:3:5: transports.n: natsjs: url: required`}},
		{"NATSBadScheme",
			"transports:\n  n:\n    type: nats\n    url: http://x\n    stream: EVENTS\n",
			nil, []string{`hub.yaml:4:10: transports.n.url: natsjs: url: scheme "http"`}},
		{"NATSBadStreamAndMode",
			"transports:\n  n:\n    type: nats\n    url: nats://x\n    stream: a.b\n    mode: fast\n",
			nil, []string{`5:13: transports.n.stream: natsjs: stream: "a.b" must not contain`, `6:11: transports.n.mode:`}},
		{"NATSTransportWithDurable",
			"transports:\n  n:\n    type: nats\n    url: nats://x\n    stream: S\n    durable: d\n",
			nil, []string{`hub.yaml:6:14: transports.n.durable: a transport publishes to the stream`}},
		{"NATSSourceWithoutDurable",
			"sources:\n  n:\n    type: nats\n    url: nats://x\n    stream: S\n",
			nil, []string{`hub.yaml:3:5: sources.n: natsjs: durable: required for a consumer`}},
		{"NATSSourceDeadLetterInsideStream",
			"sources:\n  n:\n    type: nats\n    url: nats://x\n    stream: S\n    durable: d\n    dead_letter_subject: events.dlq\n",
			nil, []string{`7:26: sources.n.dead_letter_subject: natsjs: dead_letter_subject: "events.dlq" is inside`}},
		{"NATSDurationWithoutUnit",
			"sources:\n  n:\n    type: nats\n    url: nats://x\n    stream: S\n    durable: d\n    ack_wait: 5\n",
			nil, []string{`7:15: sources.n.ack_wait: duration 5 needs a unit`}},
		{"NATSSourceBadPattern",
			"sources:\n  n:\n    type: nats\n    url: nats://x\n    stream: S\n    durable: d\n    patterns: [\"a..b\"]\n",
			nil, []string{`7:15: sources.n.patterns: natsjs: patterns[0]: hub: pattern "a..b"`}},
		{"WatermillUnknownPubSub",
			"transports:\n  w:\n    type: watermill\n    pubsub: kafka\n    url: amqp://x\n    topic: t\n",
			nil, []string{`hub.yaml:4:13: transports.w.pubsub: "kafka", want amqp or redisstream`}},
		{"WatermillSchemeForPubSub",
			"transports:\n  w:\n    type: watermill\n    pubsub: redisstream\n    url: amqp://x\n    topic: t\n",
			nil, []string{`hub.yaml:5:10: transports.w.url: scheme "amqp", want redis or rediss`}},
		{"WatermillWithoutTopic",
			"transports:\n  w:\n    type: watermill\n    pubsub: amqp\n    url: amqp://x\n",
			nil, []string{`hub.yaml:3:5: transports.w: watermill: topic: required`}},
		{"WatermillSourceWithoutGroup",
			"sources:\n  w:\n    type: watermill\n    pubsub: amqp\n    url: amqp://x\n    topic: t\n    max_deliveries: -2\n",
			nil, []string{`hub.yaml:3:5: sources.w.group: required`, `7:21: sources.w.max_deliveries: watermill: max_deliveries: must be -1`}},
		{"WatermillUnknownKey",
			"transports:\n  w:\n    type: watermill\n    pubsub: amqp\n    url: amqp://x\n    topic: t\n    queue: q\n",
			nil, []string{`hub.yaml:7:5: transports.w.queue: unknown key "queue"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps := lint(t, c.yaml, c.vars)
			if len(ps) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ps)
			}
			for i, p := range ps {
				if !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %d:\n got  %s\n want %s", i, p, c.want[i])
				}
			}
		})
	}
}
