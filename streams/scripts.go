package streams

// The two Lua scripts the Redis transport sends for its dead-letter handling, each one
// atomic step. They live here, in the layer both stream transports share, because
// they are part of the wire contract: redisstream runs them on Redis, and kdbstream's
// RESP front recognises them by their SHA1 and performs the same step as one engine
// transaction (it runs no Lua). A change to a text changes its SHA1 in both places at
// once; the front's tests run redisstream's DLQ and consumer against it.

// DeadLetterScript appends the dead-letter entry and acks the source entry (R4.6: the
// entry is either still pending or in the DLQ, never both or neither). KEYS[1] source
// stream, KEYS[2] DLQ stream; ARGV[1] group, ARGV[2] entry id, ARGV[3..] the DLQ
// fields. Reply: the new DLQ entry id. A script rather than MULTI/EXEC so the whole
// move is one round trip whose reply is the new id.
const DeadLetterScript = `
local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 3))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return id`

// ReplayScript re-appends a dead letter's original fields to the source stream and
// deletes the dead letter, so a replay never duplicates or loses the entry even when
// two operators replay at once. KEYS[1] DLQ, KEYS[2] source stream; ARGV[1] the dead
// letter's id, ARGV[2] MAXLEN ("0": no cap, as for per-category streams, E8), ARGV[3..]
// the original fields. Reply: the new entry id, or nil when the dead letter is gone.
const ReplayScript = `
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then return false end
local id
if ARGV[2] == '0' then
  id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 3))
else
  id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 3))
end
redis.call('XDEL', KEYS[1], ARGV[1])
return id`
