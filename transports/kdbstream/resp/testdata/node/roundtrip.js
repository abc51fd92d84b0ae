// Round trip of an ioredis client against the kdbstream Redis protocol front (or a
// real Redis): XGROUP CREATE, XADD (one, then a pipeline), XREADGROUP with BLOCK,
// XACK, XPENDING. Usage: node roundtrip.js <port> <stream> [password]. Prints one JSON
// line with what each step returned; exits non-zero on any error.
const Redis = require("ioredis");

async function main() {
  const [port, stream, password] = process.argv.slice(2);
  const redis = new Redis({ host: "127.0.0.1", port: Number(port), password, maxRetriesPerRequest: 1, connectionName: "ioredis-roundtrip" });
  const out = {};
  out.create = await redis.xgroup("CREATE", stream, "node-group", "$", "MKSTREAM");
  out.id = await redis.xadd(stream, "*", "type", "user.created", "event_id", "evt_1");
  const p = redis.pipeline();
  for (let i = 0; i < 5; i++) p.xadd(stream, "MAXLEN", "~", "1000", "*", "i", String(i));
  out.pipelined = (await p.exec()).filter(([err]) => !err).length;
  const read = await redis.xreadgroup("GROUP", "node-group", "node-consumer", "COUNT", 10, "BLOCK", 1000, "STREAMS", stream, ">");
  const entries = read[0][1];
  out.read = entries.length;
  out.firstFields = entries[0][1];
  out.pendingBefore = (await redis.xpending(stream, "node-group"))[0];
  out.acked = await redis.xack(stream, "node-group", ...entries.map((e) => e[0]));
  out.pendingAfter = (await redis.xpending(stream, "node-group"))[0];
  console.log(JSON.stringify(out));
  redis.disconnect();
}

main().catch((err) => {
  console.error(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
