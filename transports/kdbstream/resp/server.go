package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Server serves the Redis protocol over one engine, which it does not close.
//
// Serve blocks until Close; Close stops accepting, wakes every blocked command, closes
// every connection and waits for their handlers. It is safe to call more than once
// and before Serve.
type Server struct {
	eng     *engine.Engine
	cfg     Config
	ctx     context.Context // cancelled by Close: ends every client's commands
	cancel  context.CancelFunc
	started time.Time
	scripts *scripts

	mu      sync.Mutex
	ln      net.Listener
	clients map[int64]*client
	closed  bool
	conns   sync.WaitGroup

	nextID  atomic.Int64
	blocked atomic.Int64 // clients in a blocking command now
	appends atomic.Int64 // engine Appends made of pipelined XADDs (tests, benchmarks)
}

// New returns a server over eng.
func New(eng *engine.Engine, cfg Config) (*Server, error) {
	if eng == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "resp: nil engine")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{eng: eng, cfg: cfg, ctx: ctx, cancel: cancel, started: time.Now(),
		clients: map[int64]*client{}, scripts: newScripts()}, nil
}

// ListenAndServe listens on addr (host:port) and serves until Close.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err)
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln (TLS on top when Config.TLS is set) until Close,
// then returns nil. Each connection has one goroutine that reads its commands and runs
// them in order (serveConn).
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return hub.Wrap(hub.Unavailable, err)
		}
		delay = 0
		c := s.accept(nc)
		if c == nil {
			nc.Close()
			continue
		}
		go s.serveConn(c)
	}
}

// Close stops the server (see Server).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	for _, c := range s.clients {
		_ = c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	if ln != nil {
		_ = ln.Close()
	}
	s.conns.Wait()
	return nil
}

// accept registers a connection; nil once the server is closed.
func (s *Server) accept(nc net.Conn) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	c := newClient(s, nc)
	s.clients[c.id] = c
	s.conns.Add(1)
	return c
}

// closedConn unregisters a connection whose goroutine ends.
func (s *Server) closedConn(c *client) {
	_ = c.nc.Close()
	c.cancel()
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	s.conns.Done()
}

// clientByID returns a connected client (CLIENT UNBLOCK, CLIENT LIST).
func (s *Server) clientByID(id int64) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

func (s *Server) clientList() []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	return out
}
