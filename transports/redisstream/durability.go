package redisstream

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// Durable reports whether the server persists data: append-only file on, or at least
// one snapshot rule. E6 promises durability, which a Redis that keeps nothing on disk
// cannot give: a restart loses every stream, group and pending entry.
//
// ok is false when the server does not let us ask (CONFIG is disabled or renamed on
// many managed services, or the ACL user lacks it); then durable means nothing.
func Durable(ctx context.Context, client redis.UniversalClient) (durable, ok bool) {
	aof, err := client.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, false
	}
	save, err := client.ConfigGet(ctx, "save").Result()
	if err != nil {
		return false, false
	}
	return aof["appendonly"] == "yes" || save["save"] != "", true
}

// WarnIfVolatile logs a warning when the server keeps nothing on disk (no AOF, no
// snapshots), and a debug line when it cannot tell. It never fails: the check is
// advice to operators, not a reason to refuse service.
func WarnIfVolatile(ctx context.Context, client redis.UniversalClient, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	durable, ok := Durable(ctx, client)
	switch {
	case !ok:
		logger.DebugContext(ctx, "redis durability unknown: CONFIG GET is not allowed")
	case !durable:
		logger.WarnContext(ctx, "REDIS KEEPS NOTHING ON DISK (appendonly no, no save rules): "+
			"a restart loses every stream, consumer group and pending entry, so delivery is not durable (E6). "+
			"Enable appendonly yes (appendfsync everysec or always) in production.")
	}
}
