// Package watermill connects the hub with any Watermill Pub/Sub, in both directions.
//
// Any Watermill Pub/Sub as a hub transport and source:
//   - NewTransport wraps a message.Publisher as a hub.Transport: each event becomes one
//     Watermill message (see Encode) published to a topic;
//   - NewConsumer wraps a message.Subscriber as a hub.Consumer: each message is decoded
//     into an event, handed to the handler, acked on success and nacked (redelivered)
//     on failure, and moved to a dead-letter topic after MaxDeliveries or at once when
//     malformed.
//
// The hub's transports as Watermill Pub/Subs: NewPublisher and NewSubscriber turn a
// hub.Transport per topic and a hub.Consumer per topic and group into a
// message.Publisher and a message.Subscriber, so a Watermill application gets a hub
// transport's wire format, consumer groups and dead-letters (the Redis Streams,
// kdbstream and RabbitMQ packages build theirs with them).
//
// Mapping between CloudEvents and Watermill messages (the cloudevent package's, see
// docs/watermill.md):
//   - binary mode (default): message UUID = event id, payload = data, metadata
//     "ce_<attribute>" for every other attribute and extension in canonical string
//     form, and "eventhub_ext_types" listing the non-string extension types, so the
//     trip is lossless (cloudevent.ToMessage);
//   - structured mode: UUID = event id, payload = the event as application/cloudevents+json,
//     metadata "content-type" = application/cloudevents+json.
//
// Decode reads either (it looks at "content-type"). Broker bindings then map the
// metadata onto their headers (package natsjs writes the CloudEvents NATS binding).
//
// The hub owns the retry policy (hub.Transport's contract), so Send never retries;
// what Watermill publishers do internally (watermill-amqp reconnects, for example) is
// theirs. A Publisher has no context parameter: Send gives each message the context
// (message.SetContext), which Watermill's Publisher contract tells publishers to use,
// and calls Publish on the caller's goroutine, as Watermill's router does. For a
// publisher that can block regardless of it, Config.GuardPublish makes Send return when
// ctx ends even if Publish has not, reporting the context's error; the message may
// still be published (at-least-once).
package watermill
