package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// notifyChannel is the NOTIFY channel of a schema's streams; a hash keeps it under
// PostgreSQL's 63-byte identifier limit for long schema names.
func notifyChannel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("kdbstream_%016x", h.Sum64())
}

// listen relays NOTIFY kdbstream_<schema> '<stream>' (sent by appends in any process
// sharing the database) to the local waiters. It reconnects PollInterval after an
// error. Once LISTEN is in place it wakes every blocked read (wakeAll): NOTIFYs sent
// before that, at startup or while the connection was down, were lost, and each read
// looks again once. So blocked reads need no poll of their own (thousands of idle
// blocked clients run no query), and a gap in the listener costs latency, not entries.
func (d *postgresDialect) listen(ctx context.Context, cc *pgx.ConnConfig, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cc)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{d.channel}.Sanitize())
			if err == nil {
				d.waiters.wakeAll()
			}
			for err == nil {
				var n *pgconn.Notification
				n, err = conn.WaitForNotification(ctx)
				if err == nil {
					d.waiters.notify(n.Payload)
				}
			}
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.cfg.PollInterval):
		}
	}
}
