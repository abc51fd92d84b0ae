package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/koder/eventhub/hub"
)

// forbiddenV4 are the IPv4 ranges no webhook may reach (H4). The stdlib predicates
// (IsPrivate, IsLoopback...) miss several of them (CGNAT, benchmarking, reserved, 0/8,
// 192.0.0/24), which is how cloud metadata services on those ranges (Alibaba's
// 100.100.100.200, Oracle's 192.0.0.192) slip through other guards, so the table is
// explicit. Sources: IANA IPv4 Special-Purpose Address Registry, Svix is_allowed,
// code.dny.dev/ssrf.
var forbiddenV4 = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network (0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT, RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (incl. broadcast)"},
	// Azure's WireServer is a public address that answers only inside Azure VMs and
	// hands out VM configuration: treated like a metadata service.
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud metadata (Azure WireServer)"},
}

var (
	globalUnicastV6 = netip.MustParsePrefix("2000::/3")
	nat64WellKnown  = netip.MustParsePrefix("64:ff9b::/96")
)

// forbiddenV6 are denied inside 2000::/3 (everything outside it is denied already:
// ::/8 with loopback, unspecified and IPv4-compatible, 64:ff9b:1::/48, 100::/64,
// 5f00::/16, fc00::/7 ULA, fe80::/10, fec0::/10, ff00::/8).
var forbiddenV6 = []struct {
	prefix netip.Prefix
	reason string
}{
	// 2001::/23 holds Teredo (2001::/32, which embeds an obfuscated IPv4), benchmarking
	// (2001:2::/48) and ORCHID; none is a webhook receiver.
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (Teredo, benchmarking)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	// 6to4 (deprecated by RFC 7526) reaches the IPv4 host embedded in bits 16-48 through
	// any relay; refusing the whole prefix covers embedded private addresses too.
	{netip.MustParsePrefix("2002::/16"), "6to4 (embeds IPv4)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
}

// classifyAddr returns why addr may not be dialled, or "" when it may. IPv4-mapped
// addresses (::ffff:a.b.c.d) are unmapped first: a dial to one reaches the IPv4 host,
// and resolvers return A records in that form. NAT64 well-known addresses
// (64:ff9b::a.b.c.d) are judged by the IPv4 address they translate to, so IPv6-only
// deployments behind DNS64 keep working while 64:ff9b::7f00:1 (loopback) is refused.
func classifyAddr(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid address"
	}
	addr = addr.Unmap()
	if addr.Zone() != "" {
		return "scoped address (zone)"
	}
	if addr.Is4() {
		for _, f := range forbiddenV4 {
			if f.prefix.Contains(addr) {
				return f.reason
			}
		}
		return ""
	}
	if nat64WellKnown.Contains(addr) {
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if r := classifyAddr(v4); r != "" {
			return "NAT64 of " + v4.String() + ": " + r
		}
		return ""
	}
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsMulticast():
		return "multicast"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsPrivate():
		return "unique local (fc00::/7)"
	case !globalUnicastV6.Contains(addr):
		return "not global unicast (outside 2000::/3)"
	}
	for _, f := range forbiddenV6 {
		if f.prefix.Contains(addr) {
			return f.reason
		}
	}
	return ""
}

// Resolver looks up the addresses of a host; *net.Resolver implements it. Tests inject
// their own to answer differently on each call (DNS rebinding, H5).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// guard applies the SSRF rules (H4, H5) with the operator's allow-list.
type guard struct {
	allowPrefixes []netip.Prefix
	allowHosts    []string // lower-case; a leading "*." matches any subdomain
	resolver      Resolver
}

// newGuard parses the allow-list: each entry is a CIDR, a single IP, a host name or
// "*.domain".
func newGuard(allow []string, r Resolver) (*guard, error) {
	g := &guard{resolver: r}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	for _, a := range allow {
		a = strings.TrimSpace(a)
		if p, err := netip.ParsePrefix(a); err == nil {
			g.allowPrefixes = append(g.allowPrefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(a); err == nil {
			g.allowPrefixes = append(g.allowPrefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		if a == "" || strings.ContainsAny(a, "/:@ ") {
			return nil, fmt.Errorf("webhook: Allow entry %q: want a CIDR, an IP, a host name or *.domain", a)
		}
		g.allowHosts = append(g.allowHosts, strings.ToLower(strings.TrimSuffix(a, ".")))
	}
	return g, nil
}

// hostAllowed reports whether the operator allowed host by name.
func (g *guard) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range g.allowHosts {
		if h == host || (strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:])) {
			return true
		}
	}
	return false
}

// checkAddr returns a PermissionDenied error when addr is forbidden and not allowed.
func (g *guard) checkAddr(host string, addr netip.Addr) error {
	u := addr.Unmap()
	for _, p := range g.allowPrefixes {
		if p.Contains(u) {
			return nil
		}
	}
	if r := classifyAddr(addr); r != "" {
		if host != "" && host != addr.String() {
			return hub.Errorf(hub.PermissionDenied, "webhook: ssrf: %s resolves to %s: %s", host, addr, r)
		}
		return hub.Errorf(hub.PermissionDenied, "webhook: ssrf: %s: %s", addr, r)
	}
	return nil
}

// checkURL applies the static rules (scheme, credentials, host present). It does not
// resolve: the dialer checks the addresses actually dialled.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url %q: scheme must be http or https", redactURL(u))
	case u.User != nil:
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url %q: credentials in the URL are not allowed", redactURL(u))
	case u.Hostname() == "":
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url %q: no host", redactURL(u))
	case u.Opaque != "":
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url %q: opaque URLs are not allowed", redactURL(u))
	case !validPort(u.Port()):
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url %q: port %s is not a TCP port (1-65535)", redactURL(u), u.Port())
	}
	return u, nil
}

// validPort reports whether p, a URL's port (digits only, url.Parse checked), is empty
// (the scheme's default) or 1-65535. url.Parse accepts any digits: port 0 would let
// the kernel pick nothing to dial, and 65536 and above wrap or fail only at send.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// CheckURL applies every rule: the static ones, then resolves the host and refuses it
// when ANY of its addresses is forbidden (a host with one public and one internal
// address is refused: which one is dialled is not ours to choose).
func (g *guard) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	if g.hostAllowed(host) {
		return u, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return u, g.checkAddr("", ip)
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url: resolve %s: %v", host, err)
	}
	if len(addrs) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: url: %s has no address", host)
	}
	for _, a := range addrs {
		if err := g.checkAddr(host, a); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// redactURL drops credentials from a URL for errors and logs.
func redactURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("xxxxx")
	return c.String()
}
