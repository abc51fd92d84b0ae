package watermill

import (
	"errors"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
)

// LazyPublisher returns a Publisher that builds the real one with build at the first
// Publish, and again at the next Publish while building fails. Many Watermill
// publishers dial in their constructor (watermill-amqp does), so a process built on
// them cannot start while the broker is down; behind LazyPublisher it starts, and each
// Send during the outage fails with the build error, classified like any publish error
// (a refused connection is Unavailable), so the hub retries it.
func LazyPublisher(build func() (message.Publisher, error)) message.Publisher {
	return &lazyPublisher{build: build}
}

type lazyPublisher struct {
	build func() (message.Publisher, error)

	mu     sync.Mutex
	pub    message.Publisher
	closed bool
}

var errLazyClosed = errors.New("watermill: publisher closed")

func (l *lazyPublisher) get() (message.Publisher, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, errLazyClosed
	case l.pub != nil:
		return l.pub, nil
	}
	pub, err := l.build()
	if err != nil {
		return nil, err
	}
	l.pub = pub
	return pub, nil
}

// Publish builds the publisher if needed and publishes through it.
func (l *lazyPublisher) Publish(topic string, msgs ...*message.Message) error {
	pub, err := l.get()
	if err != nil {
		return err
	}
	return pub.Publish(topic, msgs...)
}

// Close closes the built publisher, if any. Idempotent.
func (l *lazyPublisher) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.pub != nil {
		return l.pub.Close()
	}
	return nil
}
