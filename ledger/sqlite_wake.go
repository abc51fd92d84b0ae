package ledger

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/riverqueue/river/riverdriver"
)

// River's SQLite driver has no LISTEN/NOTIFY: an insert writes a row into
// river_notification and each client's listener polls that table every 50 ms
// (riversqlite's notificationPollIntervalDefault, not configurable), so a job inserted
// in a transaction waits 25 ms on average before a producer even looks, on top of the
// insert's commit: the largest part of the embedded default's post -> receive time at
// low load. Jobs inserted through InTx are known in this process the moment their
// commit returns, so the ledger tells its own working client's listener right then
// (sqliteDriver.wake, from an AfterCommit callback of InsertManyTx); the table stays the
// path between processes sharing the file and for transactions InTx did not begin.
//
// River has no public "fetch now" call; its listener interface is the seam it offers
// drivers, so the wake-up is a synthesized insert notification, the payload River's
// own maybeNotifyInsertForQueues writes ({"queue": "<name>"}). The producer still
// honours FetchCooldown between fetches.

// GetListener wraps the driver's listener so wake reaches it once it is connected.
func (d *sqliteDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &wakeListener{Listener: d.Driver.GetListener(params), d: d, wakes: make(chan string, wakeBuffer)}
}

// wakeBuffer bounds the wake-ups queued per listener; beyond it one is dropped, as a
// queue already woken fetches everything available anyway.
const wakeBuffer = 64

// wake tells every connected listener of this driver that queues got jobs.
func (d *sqliteDriver) wake(queues []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for l := range d.listeners {
		for _, q := range queues {
			select {
			case l.wakes <- q:
			default:
			}
		}
	}
}

// wakeListener is a listener whose WaitForNotification also returns the driver's
// in-process wake-ups. The wrapped listener is read by one pump goroutine per
// connection, so a wait that ends early (its context, or a wake-up) never loses a
// notification the pump already took: it is returned by the next wait.
type wakeListener struct {
	riverdriver.Listener
	d     *sqliteDriver
	wakes chan string

	mu     sync.Mutex
	topic  string // the insert topic as River listens to it; "" until it does
	out    chan pumped
	cancel context.CancelFunc
	done   chan struct{}
}

type pumped struct {
	n   *riverdriver.Notification
	err error
}

func (l *wakeListener) Connect(ctx context.Context) error {
	if err := l.Listener.Connect(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	out, done := make(chan pumped), make(chan struct{})
	l.mu.Lock()
	l.out, l.cancel, l.done = out, cancel, done
	l.mu.Unlock()
	l.d.mu.Lock()
	l.d.listeners[l] = struct{}{} // wake reaches it from now until Close
	l.d.mu.Unlock()
	go func() {
		defer close(done)
		for {
			n, err := l.Listener.WaitForNotification(pctx)
			if pctx.Err() != nil {
				return
			}
			select {
			case out <- pumped{n, err}:
			case <-pctx.Done():
				return
			}
		}
	}()
	return nil
}

func (l *wakeListener) Close(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel, l.done, l.out = nil, nil, nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	l.d.mu.Lock()
	delete(l.d.listeners, l)
	l.d.mu.Unlock()
	return l.Listener.Close(ctx)
}

func (l *wakeListener) Listen(ctx context.Context, topic string) error {
	if err := l.Listener.Listen(ctx, topic); err != nil {
		return err
	}
	if strings.HasSuffix(topic, insertTopic) {
		l.mu.Lock()
		l.topic = topic
		l.mu.Unlock()
	}
	return nil
}

func (l *wakeListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	l.mu.Lock()
	out, topic := l.out, l.topic
	l.mu.Unlock()
	if out == nil {
		return l.Listener.WaitForNotification(ctx) // not connected: its own error
	}
	var wakes chan string
	if topic != "" {
		wakes = l.wakes
	}
	select {
	case p := <-out:
		return p.n, p.err
	case q := <-wakes:
		l.d.woken.Add(1)
		return &riverdriver.Notification{Topic: topic, Payload: insertPayload(q)}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// insertTopic is River's notification topic for new jobs (its internal
// notifier.NotificationTopicInsert), with the payload maybeNotifyInsertForQueues writes.
const insertTopic = "river_insert"

func insertPayload(queue string) string { return fmt.Sprintf(`{"queue": %q}`, queue) }

// WakeQueue asks the producers of queue to fetch now, for jobs made available other
// than by an insert (a scheduled job brought forward with JobRetry), which River
// announces to nobody: its producers would find them at their next poll. On
// PostgreSQL it is River's own insert notification (every process listening on the
// schema fetches), on SQLite the in-process wake-up. Best effort: a failure only
// leaves the poll.
func (l *Ledger) WakeQueue(ctx context.Context, queue string) error {
	if l.wake != nil {
		l.wake.wake([]string{queue})
		return nil
	}
	return l.exec.NotifyMany(ctx, &riverdriver.NotifyManyParams{
		Payload: []string{insertPayload(queue)},
		Schema:  l.cfg.Schema,
		Topic:   insertTopic,
	})
}
