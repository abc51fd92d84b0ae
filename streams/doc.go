// Package streams is the Redis Streams model shared by the hub's two stream
// transports, transports/redisstream (Redis itself) and transports/kdbstream (the same
// semantics on SQL, R9's drop-in successor). It owns everything that must not differ
// between them, so that switching buses changes no stream name, no configuration and
// no error:
//
//   - stream naming: R1's "koder:events:<service>", E8's "events.<word>", one fixed
//     stream, or a Namer of your own; the reserved prefix; R3's group names; the
//     dead-letter streams ("<stream>:dlq", E8's "events.dlq") and the reasons an entry
//     lands there;
//   - Selection: the publisher's choice among those conventions, validated once;
//   - EncodeEvent: the per-event step of a Send (stream name plus R2 fields);
//   - ConsumerConfig: the settings of the R4 consumer loop, one value for both buses;
//   - the URL helpers both openers use: ApplyURLParams, ScrubPassword, Redact.
//
// It holds types and pure functions only: no client, no I/O. The consumer loop itself
// and the Backend interface it runs over stay in internal/streams, which imports
// ConsumerConfig from here. The split follows what users name: a kdbstream user sets
// Config.Namer and an eventbus user passes a ConsumerConfig, so those types must be
// public; the loop's machinery is named by no one outside the module. Each transport
// imports this package and the loop, never the other transport.
package streams
