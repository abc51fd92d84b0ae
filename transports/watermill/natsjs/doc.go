// Package natsjs is the NATS JetStream transport and consumer of the hub, built on
// watermill-nats under the Watermill adapter (transports/watermill): a subject per event
// type in one stream, messages in the CloudEvents NATS binding (binary by default, so
// cloudevents/sdk-go's NATS protocol reads them), Nats-Msg-Id set to the event id for
// JetStream's duplicate window, durable consumers that ack after processing, delayed
// redelivery and a dead-letter stream. docs/nats.md has the configuration, the error
// table and the measured cost against raw watermill-nats.
package natsjs
