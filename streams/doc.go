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
//   - Wire: the entry format, R2 (never an empty field: default actor, default subject,
//     the acceptance time, {} data) or seed 001's envelope (EncodingSeed001), and its
//     EncodeEvent, the per-event step of a Send (stream name plus fields);
//   - Retention: each convention's trimming, MAXLEN ~ 100000 for R1 streams (R6) and
//     7 days by MINID for per-category ones (E8);
//   - ConsumerConfig: the settings of the R4 consumer loop, one value for both buses,
//     with Decode for the entry format it reads;
//   - the URL helpers both openers use: ApplyURLParams, ScrubPassword, Redact.
//
// It holds types and pure functions only: no client, no I/O. The consumer loop itself
// and the Backend interface it runs over stay in internal/streams, which imports
// ConsumerConfig from here. The split follows what users name: a kdbstream user sets
// Config.Namer and an eventbus user passes a ConsumerConfig, so those types must be
// public; the loop's machinery is named by no one outside the module. Each transport
// imports this package and the loop, never the other transport.
package streams
