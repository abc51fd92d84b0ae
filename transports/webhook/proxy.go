package webhook

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"github.com/koder/eventhub/hub"
)

// Egress through an HTTP CONNECT proxy (a smokescreen-style proxy with a static IP):
// Config.Proxy for the transport, Controls.Proxy for one endpoint. The SSRF rules
// still apply here, before the CONNECT: the target host is resolved once, every
// answer checked (H4), and the tunnel asked for is to the vetted IP literal, not the
// name, so the proxy's own resolution cannot be rebound to an internal address (H5).
// TLS to the receiver runs inside the tunnel with the URL's host name (SNI, certificate
// check), so the proxy sees only ciphertext of https deliveries.
//
// The proxy itself is the operator's (typically inside the network) and is not subject
// to the SSRF rules. What it must check on its own: that the CONNECT target is not an
// internal, loopback, link-local or metadata address (its view of the network may
// differ from ours, and a misconfigured allow list here should not be the only guard),
// and whatever egress policy it enforces by port or destination.

// checkProxyURL parses a proxy URL: http://[user:pass@]host:port, nothing else.
func checkProxyURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("webhook: proxy: %w", err)
	case u.Scheme != "http":
		return nil, fmt.Errorf("webhook: proxy %s: http://host:port (a CONNECT proxy)", redactURL(u))
	case u.Host == "" || u.Port() == "":
		return nil, fmt.Errorf("webhook: proxy %s: needs host:port", redactURL(u))
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return nil, fmt.Errorf("webhook: proxy %s: no path, query or fragment", redactURL(u))
	}
	return u, nil
}

// proxyDial returns a DialContext that tunnels through proxy to a vetted address.
func (g *guard) proxyDial(d *net.Dialer, proxy *url.URL) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var auth string
	if proxy.User != nil {
		pass, _ := proxy.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(proxy.User.Username()+":"+pass))
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, _, err := g.vetted(ctx, host)
		if err != nil {
			return nil, err
		}
		return dialEach(ctx, ips, func(ip netip.Addr) (net.Conn, error) {
			return connectVia(ctx, d, network, proxy.Host, auth, net.JoinHostPort(ip.Unmap().String(), port), addr)
		})
	}
}

// connectVia opens a CONNECT tunnel to target through the proxy at proxyAddr.
func connectVia(ctx context.Context, d *net.Dialer, network, proxyAddr, auth, target, hostPort string) (net.Conn, error) {
	conn, err := d.DialContext(ctx, network, proxyAddr)
	if err != nil {
		return nil, fmt.Errorf("webhook: proxy %s: %w", proxyAddr, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // a hung proxy must not outlive the attempt
	defer stop()
	var b strings.Builder
	fmt.Fprintf(&b, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, hostPort)
	if auth != "" {
		fmt.Fprintf(&b, "Proxy-Authorization: %s\r\n", auth)
	}
	b.WriteString("\r\n")
	if _, err := conn.Write([]byte(b.String())); err != nil {
		conn.Close()
		return nil, fmt.Errorf("webhook: proxy %s: %w", proxyAddr, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("webhook: proxy %s: %w", proxyAddr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, hub.Errorf(hub.Unavailable, "webhook: proxy %s refused CONNECT %s: %s", proxyAddr, target, resp.Status)
	}
	if br.Buffered() > 0 { // the proxy must not speak before the tunnel's first byte
		conn.Close()
		return nil, fmt.Errorf("webhook: proxy %s: unexpected bytes after CONNECT", proxyAddr)
	}
	return conn, nil
}

// clients holds one HTTP client per egress proxy and TLS setting (endpoints may have
// their own of either).
type clients struct {
	g               *guard
	maxConnsPerHost int
	direct          *http.Client // Config.Proxy's, or no proxy
	proxy           *url.URL     // Config.Proxy, for endpoints with their own TLS

	mu      sync.Mutex
	proxied map[string]*http.Client
}

// forEndpoint returns the client of ep's proxy (its own, else the transport's) and TLS
// settings, built once per distinct pair.
func (c *clients) forEndpoint(ep *Endpoint) (*http.Client, error) {
	ctl := ep.Controls
	if ctl.Proxy == "" && ctl.TLS.isZero() {
		return c.direct, nil
	}
	key := ctl.Proxy + "|" + ctl.TLS.fingerprint()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.proxied[key]; ok {
		return cl, nil
	}
	proxy := c.proxy
	if ctl.Proxy != "" {
		u, err := checkProxyURL(ctl.Proxy)
		if err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
		proxy = u
	}
	tc, err := ctl.TLS.config()
	if err != nil {
		return nil, err
	}
	if c.proxied == nil {
		c.proxied = map[string]*http.Client{}
	}
	cl := newHTTPClient(c.g, c.maxConnsPerHost, proxy, tc)
	c.proxied[key] = cl
	return cl, nil
}

func (c *clients) closeIdle() {
	c.direct.CloseIdleConnections()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.proxied {
		cl.CloseIdleConnections()
	}
}
