package streams

import (
	"context"
	"time"
)

// claim is the claimer goroutine (R4.5): every ClaimInterval it walks the group's
// pending list with AutoClaim and hands over entries idle for at least ClaimMinIdle,
// whoever owned them. Entries this consumer already holds (a batch waiting behind a
// slow one) are skipped: claiming them again would only run them twice.
//
// XAUTOCLAIM rather than XPENDING + XCLAIM per entry (watermill-redisstream's way):
// one round trip claims a page, and the server skips entries another claimer just took.
func (c *Consumer) claim(ctx context.Context, out chan<- batch) {
	cfg := c.cfg
	t := time.NewTicker(cfg.ClaimInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cursor := "0-0"
		for ctx.Err() == nil {
			next, entries, err := c.b.AutoClaim(ctx, cfg.Stream, cfg.Group, cfg.Consumer, cfg.ClaimMinIdle, cursor, cfg.Count)
			if err != nil {
				if ctx.Err() == nil {
					cfg.Logger.Warn("stream claim failed", "stream", cfg.Stream, "group", cfg.Group, "error", err)
				}
				break
			}
			fresh := entries[:0]
			for _, e := range entries {
				if _, held := c.inHand.LoadOrStore(e.ID, struct{}{}); !held {
					fresh = append(fresh, e)
				}
			}
			if len(fresh) > 0 {
				select {
				case out <- batch{entries: fresh, claimed: true}:
				case <-ctx.Done():
					for _, e := range fresh {
						c.inHand.Delete(e.ID)
					}
					return
				}
			}
			if next == "0-0" || next == "" || next == cursor {
				break
			}
			cursor = next
		}
	}
}
