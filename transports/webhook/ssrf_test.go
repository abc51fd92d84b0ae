package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/koder/eventhub/hub"
)

// mapResolver answers from a fixed table; unknown names are NXDOMAIN.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := m[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(as))
	for i, a := range as {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// rebindingResolver answers first (registration) with a public address and then with
// an internal one: the DNS-rebinding attack of H5.
type rebindingResolver struct {
	first, then string
	calls       atomic.Int32
}

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr(r.first)}, nil
	}
	return []netip.Addr{netip.MustParseAddr(r.then)}, nil
}

func TestH4_SSRFTable(t *testing.T) {
	t.Parallel()
	dns := mapResolver{
		"example.com":         {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"localhost":           {"127.0.0.1", "::1"},
		"metadata.internal":   {"169.254.169.254"},
		"mixed.example":       {"93.184.216.34", "10.0.0.5"},
		"mapped.example":      {"::ffff:127.0.0.1"},
		"v6only.example":      {"2a00:1450:4001:82a::200e"},
		"ula.example":         {"fd00:ec2::254"},
		"internal.corp":       {"10.20.30.40"},
		"svc.allowed.example": {"10.9.9.9"},
	}
	g, err := newGuard([]string{"192.168.77.0/24", "internal.corp", "*.allowed.example", "fd12::1"}, dns)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in    string
		allow bool
	}{
		// Addresses.
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"172.32.0.1", true},
		{"192.168.1.1", false},
		{"192.168.77.10", true}, // allow-listed CIDR
		{"169.254.169.254", false},
		{"169.254.0.1", false},
		{"100.64.0.1", false},
		{"100.100.100.200", false}, // Alibaba metadata (CGNAT)
		{"100.128.0.1", true},
		{"192.0.0.192", false}, // Oracle metadata
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"168.63.129.16", false},
		{"::", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::ffff:8.8.8.8", true},
		{"::127.0.0.1", false}, // IPv4-compatible (deprecated)
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"64:ff9b:1::a00:1", false},
		{"2002:7f00:1::1", false}, // 6to4 of 127.0.0.1
		{"2002:808:808::1", false},
		{"2001::1", false},     // Teredo
		{"2001:2::1", false},   // benchmarking
		{"2001:db8::1", false}, // documentation
		{"3fff::1", false},     // documentation
		{"fc00::1", false},
		{"fd00:ec2::254", false}, // AWS metadata v6
		{"fd12::1", true},        // allow-listed IP
		{"fe80::1", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"100::1", false},
		{"5f00::1", false},
		// URLs (static rules, then every resolved address).
		{"https://example.com/hook", true},
		{"http://example.com:8080/hook?x=1", true},
		{"https://v6only.example/", true},
		{"http://localhost/hook", false},
		{"http://LOCALHOST./hook", false},
		{"http://127.0.0.1:8080/", false},
		{"http://[::1]/", false},
		{"http://[::ffff:169.254.169.254]/", false},
		{"http://metadata.internal/latest/meta-data/", false},
		{"http://169.254.169.254/latest/meta-data/", false},
		{"http://mixed.example/", false}, // one public, one private: refused
		{"http://mapped.example/", false},
		{"http://ula.example/", false},
		{"http://internal.corp/", true},       // allow-listed host
		{"http://svc.allowed.example/", true}, // allow-listed domain
		{"http://nonexistent.example/", false},
		{"ftp://example.com/", false},
		{"file:///etc/passwd", false},
		{"gopher://example.com/", false},
		{"https://user:pass@example.com/", false},
		{"https://user@example.com/", false},
		{"https:example.com", false},
		{"https:///path", false},
		{"//example.com/", false},
		{"http://0x7f000001/", false}, // not an IP to Go: resolved, and unknown here
		{"http://[fe80::1%25eth0]/", false},
	}
	if len(cases) < 40 {
		t.Fatalf("table has %d cases, want at least 40", len(cases))
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			var err error
			if ip, perr := netip.ParseAddr(c.in); perr == nil {
				err = g.checkAddr("", ip)
			} else {
				_, err = g.CheckURL(ctx, c.in)
			}
			if c.allow && err != nil {
				t.Fatalf("%s refused: %v", c.in, err)
			}
			if !c.allow && err == nil {
				t.Fatalf("%s allowed, want refused", c.in)
			}
		})
	}
}

func TestH4_DialControlRefusesForbiddenAddress(t *testing.T) {
	t.Parallel()
	g, _ := newGuard(nil, mapResolver{"rebind.example": {"127.0.0.1"}})
	dial := g.dialContext(&net.Dialer{})
	for _, addr := range []string{"127.0.0.1:80", "[::1]:80", "169.254.169.254:80", "rebind.example:80"} {
		_, err := dial(context.Background(), "tcp", addr)
		var he *hub.Error
		if !errors.As(err, &he) || he.Code != hub.PermissionDenied {
			t.Fatalf("dial %s = %v, want a PermissionDenied ssrf error", addr, err)
		}
	}
}

func TestH5_DialControlChecksTheSocketAddress(t *testing.T) {
	t.Parallel()
	g, _ := newGuard([]string{"127.0.0.2"}, nil)
	ctl := g.control("receiver.example")
	for addr, ok := range map[string]bool{
		"93.184.216.34:443": true, "[2606:4700:4700::1111]:443": true, "127.0.0.2:80": true,
		"127.0.0.1:80": false, "[::ffff:169.254.169.254]:80": false, "10.0.0.1:443": false, "not-an-address": false,
	} {
		if err := ctl("tcp", addr, nil); (err == nil) != ok {
			t.Fatalf("control(%s) = %v, want allowed=%v", addr, err, ok)
		}
	}
}

func TestH4_AllowListParsing(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "http://x", "a b", "user@host"} {
		if _, err := newGuard([]string{bad}, nil); err == nil {
			t.Fatalf("newGuard(%q) accepted, want error", bad)
		}
	}
}
