package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Addr hands out loopback ports below the ephemeral range (where client
// connections of other tests cannot take them), each once, and bindable.
func TestFreeAddr(t *testing.T) {
	lo := ephemeralStart()
	seen := map[string]bool{}
	for range 50 {
		addr, err := Addr()
		if err != nil {
			t.Fatal(err)
		}
		host, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		if host != "127.0.0.1" || port >= lo || seen[addr] {
			t.Fatalf("Addr = %s (ephemeral range from %d, seen before: %v)", addr, lo, seen[addr])
		}
		seen[addr] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("cannot bind %s: %v", addr, err)
		}
		_ = ln.Close()
	}
}
