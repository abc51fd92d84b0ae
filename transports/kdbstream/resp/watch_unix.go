//go:build unix

package resp

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// watchClose calls gone when the peer closes conn while a command blocks; stop ends
// the watch (and must be called before the connection is read again). redcon reads a
// connection only between commands, so a blocked client that disconnects would
// otherwise hold its goroutine until BLOCK expires (forever with BLOCK 0). The watch
// peeks at the socket (MSG_PEEK: nothing is consumed) from one goroutine parked in the
// runtime's poller: no CPU while the client stays. Data arriving (a pipelined command)
// ends the watch without calling gone; Redis keeps such a client blocked too.
func watchClose(conn net.Conn, gone func()) (stop func()) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var peer bool // the peer closed or reset the connection
		b := make([]byte, 1)
		err := raw.Read(func(fd uintptr) bool {
			n, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				return false // wait for readiness
			}
			peer = n == 0 || err != nil
			return true
		})
		if err == nil && peer {
			gone()
		}
	}()
	return func() {
		_ = conn.SetReadDeadline(time.Unix(1, 0)) // wakes raw.Read
		<-done
		_ = conn.SetReadDeadline(time.Time{})
	}
}
