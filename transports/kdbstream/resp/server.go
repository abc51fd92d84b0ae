package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

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
	srv     *redcon.Server
	clients map[int64]*client
	closed  bool
	conns   sync.WaitGroup

	nextID  atomic.Int64
	blocked atomic.Int64 // clients in a blocking command now
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
// then returns nil.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	srv := redcon.NewServerNetwork(ln.Addr().Network(), ln.Addr().String(), s.handle, s.accept, s.closedConn)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.srv = srv
	s.mu.Unlock()
	err := srv.Serve(ln)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Close stops the server (see Server).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv := s.srv
	s.mu.Unlock()
	s.cancel()
	if srv != nil {
		_ = srv.Close()
	}
	// redcon closes the connections once its accept loop ends; closing them here too
	// makes Close independent of that goroutine's timing.
	s.mu.Lock()
	for _, c := range s.clients {
		_ = c.conn.NetConn().Close()
	}
	s.mu.Unlock()
	s.conns.Wait()
	return nil
}

// accept registers a connection.
func (s *Server) accept(conn redcon.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c := newClient(s, conn)
	s.clients[c.id] = c
	s.conns.Add(1)
	conn.SetContext(c)
	return true
}

// closedConn runs when a connection's handler has returned.
func (s *Server) closedConn(conn redcon.Conn, _ error) {
	c, ok := conn.Context().(*client)
	if !ok {
		return
	}
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
