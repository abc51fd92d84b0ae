package rabbitmq

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub"
)

// connection keeps one AMQP connection alive: when the broker or the network drops it,
// a background loop redials with exponential backoff and runs onConnect (which
// re-declares the topology) before anyone may use the new connection. amqp091-go has
// no automatic recovery of its own, and watermill-amqp's is tied to its publisher and
// subscriber types, hence this small loop.
//
// While it is down, current fails at once with Unavailable instead of queueing: the
// publisher must never report success without a confirm, and the hub's delivery mode
// (or the outbox relay) owns the retry.
type connection struct {
	cfg       *Config
	name      string
	onConnect func(*amqp.Connection) error

	mu    sync.Mutex
	conn  *amqp.Connection
	gen   uint64        // increments on every successful (re)connect
	ready chan struct{} // closed while connected; replaced on loss

	blocked atomic.Bool // the broker sent connection.blocked (memory or disk alarm)

	closing chan struct{}
	done    chan struct{}
	once    sync.Once
}

// dialConnection connects once (failing fast, so a wrong URL or a down broker is
// reported by New) and starts the recovery loop.
func dialConnection(ctx context.Context, cfg *Config, name string, onConnect func(*amqp.Connection) error) (*connection, error) {
	c := &connection{cfg: cfg, name: name, onConnect: onConnect, ready: make(chan struct{}),
		closing: make(chan struct{}), done: make(chan struct{})}
	if cfg.ConnectInBackground {
		go c.loop(nil, 0)
		return c, nil
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.setUp(conn)
	go c.loop(conn, cfg.ReconnectMin)
	return c, nil
}

func (c *connection) dial(ctx context.Context) (*amqp.Connection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("eventhub-" + c.name)
	conn, err := amqp.DialConfig(c.cfg.URL, amqp.Config{
		Dial:            amqp.DefaultDial(c.cfg.DialTimeout),
		TLSClientConfig: c.cfg.TLS,
		Heartbeat:       10 * time.Second,
		Properties:      props,
	})
	if err != nil {
		return nil, wrap(redactErr(err, c.cfg.URL))
	}
	if err := c.onConnect(conn); err != nil {
		_ = conn.Close()
		return nil, wrap(err)
	}
	return conn, nil
}

func (c *connection) setUp(conn *amqp.Connection) {
	// While a resource alarm blocks publishing, RabbitMQ stops reading the socket, so a
	// publish would hang past its context. Track it and fail fast instead.
	c.blocked.Store(false)
	blockings := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	go func() {
		for b := range blockings { // closed with the connection
			c.blocked.Store(b.Active)
			if b.Active {
				c.cfg.Logger.Warn("rabbitmq_blocked", "transport", transportLabel, "role", c.name, "reason", b.Reason)
			}
		}
	}()
	c.mu.Lock()
	c.conn = conn
	c.gen++
	close(c.ready)
	c.mu.Unlock()
}

func (c *connection) setDown() {
	c.mu.Lock()
	c.conn = nil
	c.ready = make(chan struct{})
	c.mu.Unlock()
}

// loop watches conn and redials when it is lost; a nil conn starts by dialling after
// firstWait.
func (c *connection) loop(conn *amqp.Connection, firstWait time.Duration) {
	defer close(c.done)
	log := c.cfg.Logger.With("transport", transportLabel, "role", c.name)
	for {
		if conn != nil {
			lost := conn.NotifyClose(make(chan *amqp.Error, 1))
			select {
			case <-c.closing:
				_ = conn.Close()
				return
			case err := <-lost:
				c.setDown()
				log.Warn("rabbitmq_connection_lost", "error", errString(err))
			}
		}
		backoff := firstWait
		for attempt := 1; ; attempt++ {
			t := time.NewTimer(backoff)
			select {
			case <-c.closing:
				t.Stop()
				return
			case <-t.C:
			}
			firstWait = c.cfg.ReconnectMin
			var err error
			conn, err = c.dial(context.Background())
			if err == nil {
				c.setUp(conn)
				log.Info("rabbitmq_reconnected", "attempt", attempt)
				break
			}
			conn = nil
			backoff = min(max(backoff*2, c.cfg.ReconnectMin), c.cfg.ReconnectMax)
			log.Warn("rabbitmq_reconnect_failed", "attempt", attempt, "error", err.Error(), "backoff", backoff.String())
		}
	}
}

// current returns the live connection and its generation, or Unavailable.
func (c *connection) current() (*amqp.Connection, uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closing:
		return nil, 0, hub.Errorf(hub.FailedPrecondition, "rabbitmq: %s is closed", c.name)
	default:
	}
	if c.conn == nil || c.conn.IsClosed() {
		return nil, 0, hub.Errorf(hub.Unavailable, "rabbitmq: %s: not connected to the broker (reconnecting)", c.name)
	}
	return c.conn, c.gen, nil
}

// publishBlocked fails with ResourceExhausted while the broker blocks publishers.
func (c *connection) publishBlocked() error {
	if c.blocked.Load() {
		return hub.Errorf(hub.ResourceExhausted, "rabbitmq: %s: the broker blocks publishing (memory or disk alarm)", c.name)
	}
	return nil
}

// wait blocks until the connection is up, ctx ends or the connection is closed.
func (c *connection) wait(ctx context.Context) (*amqp.Connection, uint64, error) {
	for {
		c.mu.Lock()
		ready := c.ready
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-c.closing:
			return nil, 0, hub.Errorf(hub.FailedPrecondition, "rabbitmq: %s is closed", c.name)
		case <-ready:
		}
		if conn, gen, err := c.current(); err == nil {
			return conn, gen, nil
		}
		// Lost again between the signal and the read: wait for the next one.
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-c.closing:
			return nil, 0, hub.Errorf(hub.FailedPrecondition, "rabbitmq: %s is closed", c.name)
		case <-time.After(c.cfg.ReconnectMin):
		}
	}
}

func (c *connection) close() {
	c.once.Do(func() { close(c.closing) })
	<-c.done
}

func errString(err *amqp.Error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}
