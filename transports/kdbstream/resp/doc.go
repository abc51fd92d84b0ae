// Package resp is a Redis protocol (RESP2 and RESP3) server over the kdbstream engine:
// redis-cli, go-redis, ioredis and any other Redis client speak to streams stored in
// SQLite or in PostgreSQL shared by several hubs, so moving a fleet off Redis (R9) is a
// URL change for every client, not only for the hub's own Go code.
//
// It serves the stream commands of the engine (XADD, XREADGROUP, XREAD, XACK, XCLAIM,
// XAUTOCLAIM, XPENDING, XGROUP, XINFO, XRANGE, XREVRANGE, XLEN, XTRIM, XDEL), the key
// commands the hub's own Redis code and ops tools send (EXISTS, SET NX EX, GET, DEL,
// UNLINK, TYPE, TTL, PTTL, STRLEN, KEYS, SCAN, DBSIZE, MEMORY), the connection commands
// clients send on connect (HELLO, AUTH, PING, ECHO, SELECT 0, CLIENT, COMMAND, CONFIG
// GET, INFO, QUIT), and the Redis transport's two Lua scripts (EVAL, EVALSHA, SCRIPT
// LOAD and EXISTS), recognised by their SHA1 and run as single engine transactions (see
// scripts.go). Anything else is "-ERR unknown command", never a silent success.
//
// One goroutine per connection reads its requests (reader.go frames RESP multibulk
// requests itself and leaves inline ones to github.com/tidwall/redcon's parser) and runs
// a pipeline's commands in order, their replies going out in one write. Consecutive
// pipelined XADDs become one engine Append (one transaction, one fsync), also when the
// pipeline arrives in several reads; a blocked XREAD/XREADGROUP runs no query while it
// waits (the engine wakes it on appends, PostgreSQL's NOTIFY across processes) and
// holds no read buffer, so idle blocked clients cost memory only.
package resp
