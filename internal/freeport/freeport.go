// Package freeport picks loopback ports for servers a test (or the end-to-end
// benchmark) starts a moment later in another process: a hub, a redis-server.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Addr returns a loopback address with a port nobody listens on right now, for a
// process to bind a moment later. The port is taken below the kernel's ephemeral
// range (ip_local_port_range): a port from the range, free when checked, can be handed
// to a client connection of another test before the hub binds it ("address already in
// use"); below it only another listener can take it. Ports handed out by this process
// are not handed out again.
func Addr() (string, error) {
	lo := ephemeralStart()
	base := 10000
	if lo-1 <= base {
		base = 1024
	}
	span := lo - base
	usedMu.Lock()
	defer usedMu.Unlock()
	for range 200 {
		port := base + rand.IntN(span)
		if used[port] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		used[port] = true
		return ln.Addr().String(), nil
	}
	// The range below is crowded: let the kernel pick (the old race is back, rarely).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

var (
	usedMu sync.Mutex
	used   = map[int]bool{}
)

// ephemeralStart is the first port of the kernel's ephemeral range, read once
// (Linux's default when it cannot be read).
var ephemeralStart = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if lo, err := strconv.Atoi(f[0]); err == nil && lo > 1024 {
			return lo
		}
	}
	return 32768
})

// Port is Addr's port number.
func Port() (int, error) {
	addr, err := Addr()
	if err != nil {
		return 0, err
	}
	_, p, _ := net.SplitHostPort(addr)
	return strconv.Atoi(p)
}
