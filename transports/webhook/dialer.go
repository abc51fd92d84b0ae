package webhook

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/koder/eventhub/hub"
)

// The SSRF-safe client (H4, H5). The seed resolved DNS, vetted the answer and then let
// the HTTP client resolve again to connect: a DNS-rebinding server answers a public
// address to the check and an internal one to the connect. Here the dialer itself
// resolves once, refuses the host if ANY answer is forbidden, and connects to the
// vetted IP literals; a net.Dialer.Control hook then checks the socket address right
// before connect() as a backstop (it sees every address actually dialled, whatever path
// led there). Hand-written rather than taken from code.dny.dev/ssrf because that
// package allows only ports 80/443, has no allow-list by host name and no injectable
// resolver, and its Control alone would still pick among mixed answers instead of
// refusing the host.

// dialContext resolves host, vets every answer and dials the vetted addresses in order.
func (g *guard) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, allowedHost, err := g.vetted(ctx, host)
		if err != nil {
			return nil, err
		}
		dialer := *d
		if !allowedHost {
			dialer.Control = g.control(host)
		}
		return dialEach(ctx, ips, func(ip netip.Addr) (net.Conn, error) {
			return dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		})
	}
}

// dialEach tries the vetted addresses in order and returns the first connection, or
// the first error when none connects (the direct dialer and the proxy's CONNECT share it).
func dialEach(ctx context.Context, ips []netip.Addr, dial func(netip.Addr) (net.Conn, error)) (net.Conn, error) {
	var firstErr error
	for _, ip := range ips {
		conn, err := dial(ip)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// vetted resolves host once and checks every answer against the SSRF rules (unless
// the host is allow-listed): the addresses a connection to host may use, whether
// directly or through an egress proxy's CONNECT (proxy.go).
func (g *guard) vetted(ctx context.Context, host string) ([]netip.Addr, bool, error) {
	allowedHost := g.hostAllowed(host)
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		if ips, err = g.resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, false, err
		}
		if len(ips) == 0 {
			return nil, false, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	if !allowedHost {
		for _, ip := range ips {
			if err := g.checkAddr(host, ip); err != nil {
				return nil, false, err
			}
		}
	}
	return ips, allowedHost, nil
}

// control is the net.Dialer.Control backstop: it sees the numeric address of every
// socket right before connect(), whatever path led there.
func (g *guard) control(host string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return hub.Errorf(hub.PermissionDenied, "webhook: ssrf: unparsable dial address %q", address)
		}
		return g.checkAddr(host, ap.Addr())
	}
}

// newHTTPClient builds the delivery client: no proxy from the environment (a proxy
// would resolve and connect on our behalf, defeating the dial check), no redirects,
// the guarded dialer, a per-attempt timeout applied by the caller's context.
//
// With proxy set, every connection is a CONNECT tunnel through it (proxy.go), to an
// address vetted here first.
// tlsConf, when set, is the endpoint's TLS (client certificate, CAs, minimum version).
func newHTTPClient(g *guard, maxConnsPerHost int, proxy *url.URL, tlsConf ...*tls.Config) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial := g.dialContext(d)
	if proxy != nil {
		dial = g.proxyDial(d, proxy)
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1000,
		MaxIdleConnsPerHost:   maxConnsPerHost,
		MaxConnsPerHost:       maxConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 0, // bounded by the attempt context
	}
	if len(tlsConf) > 0 && tlsConf[0] != nil {
		tr.TLSClientConfig = tlsConf[0]
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
