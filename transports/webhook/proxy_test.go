package webhook

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// connectProxy is a minimal HTTP CONNECT proxy: it records every target asked for and
// tunnels bytes both ways.
type connectProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	targets []string
	auth    []string
}

func newConnectProxy(t *testing.T) *connectProxy {
	p := &connectProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		p.mu.Lock()
		p.targets = append(p.targets, r.Host)
		p.auth = append(p.auth, r.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { _, _ = io.Copy(up, conn); up.Close() }()
		_, _ = io.Copy(conn, up)
		conn.Close()
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *connectProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// rebinding answers public at first (the registration check) and internal later.
type rebinding struct{ calls atomic.Int32 }

func (r *rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
}

// TestDC_EgressProxy: deliveries go through the transport's CONNECT proxy, or an
// endpoint's own, as tunnels to the vetted IP; a target that fails the SSRF rules at
// dial time is refused before any CONNECT is sent.
func TestDC_EgressProxy(t *testing.T) {
	t.Parallel()
	transportProxy, endpointProxy := newConnectProxy(t), newConnectProxy(t)
	proxyURL := "http://user:pw@" + transportProxy.srv.Listener.Addr().String()
	tb := setup(t, ledger.SQLite, func(c *Config) { c.Proxy = proxyURL })
	viaTransport := tb.endpoint(t, "/via-transport")
	viaOwn, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/via-own"), Patterns: []string{"#"},
		Controls: Controls{Proxy: "http://" + endpointProxy.srv.Listener.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "user.created"))
	tb.waitStates(t, DeliveryFilter{EndpointID: viaTransport.ID}, 1, DeliveryDelivered)
	tb.waitStates(t, DeliveryFilter{EndpointID: viaOwn.ID}, 1, DeliveryDelivered)
	recvAddr := tb.recv.srv.Listener.Addr().String()
	if got := transportProxy.seen(); len(got) != 1 || got[0] != recvAddr {
		t.Fatalf("transport proxy saw %v, want one CONNECT to %s", got, recvAddr)
	}
	if got := endpointProxy.seen(); len(got) != 1 || got[0] != recvAddr {
		t.Fatalf("endpoint proxy saw %v, want one CONNECT to %s", got, recvAddr)
	}
	if a := transportProxy.auth[0]; !strings.HasPrefix(a, "Basic ") {
		t.Fatalf("Proxy-Authorization %q", a)
	}
	if ep, _ := tb.tr.Endpoint(tb.ctx, viaOwn.ID); ep.View().Controls.Proxy == "" {
		t.Fatal("view lost the proxy")
	}
	if v := (&Endpoint{Controls: Controls{Proxy: proxyURL}}).View(); strings.Contains(v.Controls.Proxy, "pw") {
		t.Fatalf("view shows proxy credentials: %s", v.Controls.Proxy)
	}

	t.Run("SSRFBeforeConnect", func(t *testing.T) {
		t.Parallel()
		p := newConnectProxy(t)
		tb := setup(t, ledger.SQLite, func(c *Config) {
			c.Proxy = "http://" + p.srv.Listener.Addr().String()
			c.Resolver = &rebinding{}
			c.Allow = nil
		})
		ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: "http://receiver.example/hook", Patterns: []string{"#"}})
		if err != nil {
			t.Fatal(err)
		}
		tb.send(t, newEvent(t, "user.created"))
		ds := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDead)
		if !strings.Contains(ds[0].LastError, "ssrf") {
			t.Fatalf("dead with %q, want the SSRF refusal", ds[0].LastError)
		}
		if got := p.seen(); len(got) != 0 {
			t.Fatalf("the proxy was asked to CONNECT %v", got)
		}
	})

	t.Run("BadProxyURLs", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"https://p:3128", "http://p", "socks5://p:1080", "http://p:3128/x", "::"} {
			if _, err := (&Controls{Proxy: u}).compile(); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("proxy %q: %v", u, err)
			}
			c := testConfig()
			c.Proxy = u
			c.setDefaults()
			if err := c.Validate(); err == nil {
				t.Errorf("Config.Proxy %q accepted", u)
			}
		}
	})
}
