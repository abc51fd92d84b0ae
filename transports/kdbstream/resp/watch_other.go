//go:build !unix

package resp

import "net"

// watchClose does not watch on this platform: a blocked client that disconnects
// keeps its handler until the BLOCK expires.
func watchClose(net.Conn, func()) func() { return func() {} }
