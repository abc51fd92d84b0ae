package resp

import (
	"bytes"
	"io"
	"math"
	"strings"

	"github.com/tidwall/redcon"
)

// Redis's request limits (networking.c): a multibulk of at most 1M arguments, a bulk
// of at most proto-max-bulk-len (512 MB), an inline request or a length line of at most
// 64 KB.
const (
	maxArgs       = 1024 * 1024
	maxBulk       = 512 * 1024 * 1024
	maxInline     = 64 * 1024
	readBufSize   = 16 * 1024 // holds a go-redis pipeline of 100 small XADDs in one read
	readBufShrink = 256 * 1024
)

// protocolError is a malformed request: the connection gets "-ERR Protocol error: ..."
// and is closed, as Redis does (nothing after it can be framed reliably).
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "Protocol error: " + e.msg }

var (
	errMultibulkLen = &protocolError{"invalid multibulk length"}
	errBulkLen      = &protocolError{"invalid bulk length"}
	errBigInline    = &protocolError{"too big inline request"}
	errBigCount     = &protocolError{"too big mbulk count string"}
	errBigBulkCount = &protocolError{"too big bulk count string"}
)

// cmdReader frames the commands of one connection: RESP multibulk requests, and inline
// ones (telnet, "PING\r\n") as redcon splits them. It keeps what it has read in one
// buffer and tells the caller whether a request has started arriving but is not
// complete (partial), which is how the server knows that more of a pipeline is on its
// way before it commits the XADDs already read (a 4 KB read window cut a go-redis
// pipeline of 100 XADDs into four Appends, four fsyncs).
//
// Each command is one string (one allocation) that its arguments are sliced from, so
// no argument aliases the buffer and the buffer can move at any time.
type cmdReader struct {
	rd   io.Reader
	buf  []byte
	r, w int // buf[r:w] is read and not yet framed
	need int // bytes the incomplete request at r needs at least (0: unknown)

	// unauthed applies Redis's limits for a client that has not authenticated yet (at
	// most 10 arguments of at most 16 KB), so nobody can make the server buffer 512 MB
	// before AUTH.
	unauthed bool
}

func newCmdReader(rd io.Reader) *cmdReader { return &cmdReader{rd: rd} }

// partial reports whether the buffer holds the beginning of a request.
func (cr *cmdReader) partial() bool { return cr.w > cr.r }

// release drops the buffer when it holds nothing (an idle blocked client then keeps no
// read buffer).
func (cr *cmdReader) release() {
	if cr.r == cr.w {
		cr.buf, cr.r, cr.w = nil, 0, 0
	}
}

// read appends to cmds every complete request buffered, reading from the connection
// (blocking) until there is at least one. A protocol error comes after the requests
// framed before it; an I/O error too (a connection closed mid-pipeline still runs the
// commands that arrived whole).
func (cr *cmdReader) read(cmds [][]string) ([][]string, error) {
	n0 := len(cmds)
	for {
		var err error
		cmds, err = cr.frameAll(cmds)
		if err != nil || len(cmds) > n0 {
			return cmds, err
		}
		if err := cr.fill(); err != nil {
			return cmds, err
		}
	}
}

// fill reads once from the connection into the buffer, making room first.
func (cr *cmdReader) fill() error {
	if cr.r == cr.w {
		cr.r, cr.w = 0, 0
		if cap(cr.buf) > readBufShrink {
			cr.buf = nil
		}
	}
	if cr.buf == nil {
		cr.buf = make([]byte, readBufSize)
	}
	if cr.w == len(cr.buf) {
		if cr.r > 0 {
			cr.w = copy(cr.buf, cr.buf[cr.r:cr.w])
			cr.r = 0
		}
		if cr.w == len(cr.buf) || cr.need > len(cr.buf) {
			size := max(2*len(cr.buf), cr.need)
			nb := make([]byte, size)
			cr.w = copy(nb, cr.buf[cr.r:cr.w])
			cr.r = 0
			cr.buf = nb
		}
	}
	n, err := cr.rd.Read(cr.buf[cr.w:])
	cr.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// frameAll appends every complete request in the buffer to cmds; only the first one
// before authentication (the next is framed after AUTH ran, under its limits).
func (cr *cmdReader) frameAll(cmds [][]string) ([][]string, error) {
	n0 := len(cmds)
	for cr.r < cr.w && (!cr.unauthed || len(cmds) == n0) {
		b := cr.buf[cr.r:cr.w]
		var (
			args []string
			n    int
			err  error
		)
		if b[0] == '*' {
			args, n, cr.need, err = frameMultibulk(b, cr.unauthed)
		} else {
			args, n, err = frameInline(b)
			cr.need = 0
		}
		if err != nil {
			return cmds, err
		}
		if n == 0 {
			return cmds, nil // incomplete
		}
		cr.r += n
		if len(args) > 0 {
			cmds = append(cmds, args)
		}
	}
	return cmds, nil
}

// frameMultibulk frames "*<n>\r\n" and n times "$<len>\r\n<bytes>\r\n" at the start of
// b. n is 0 while incomplete, with need the bytes the request takes at least when
// known (so a large bulk is read into a buffer of the right size at once).
func frameMultibulk(b []byte, unauthed bool) (args []string, n, need int, err error) {
	count, i, err := lenLine(b, errBigCount, errMultibulkLen)
	if err != nil || i == 0 {
		return nil, 0, 0, err
	}
	if count > maxArgs {
		return nil, 0, 0, errMultibulkLen
	}
	if count <= 0 {
		return nil, i, 0, nil // "*0", "*-1": an empty request, skipped (Redis does)
	}
	if unauthed && count > 10 {
		return nil, 0, 0, &protocolError{"unauthenticated multibulk length"}
	}
	type span struct{ from, to int }
	var small [16]span // most requests have few arguments: no allocation for them
	spans := small[:0]
	if count > len(small) {
		spans = make([]span, 0, count)
	}
	for range count {
		if i >= len(b) {
			return nil, 0, i + 3, nil
		}
		if b[i] != '$' {
			return nil, 0, 0, &protocolError{"expected '$', got '" + string(b[i]) + "'"}
		}
		size, ln, err := lenLine(b[i:], errBigBulkCount, errBulkLen)
		if err != nil || ln == 0 {
			return nil, 0, 0, err
		}
		if size < 0 || size > maxBulk {
			return nil, 0, 0, errBulkLen
		}
		if unauthed && size > 16384 {
			return nil, 0, 0, &protocolError{"unauthenticated bulk length"}
		}
		from := i + ln
		end := from + size + 2
		if end > len(b) {
			return nil, 0, end, nil
		}
		if b[end-2] != '\r' || b[end-1] != '\n' {
			return nil, 0, 0, errBulkLen
		}
		spans = append(spans, span{from, from + size})
		i = end
	}
	// One string for the request; the arguments are slices of it.
	first := spans[0].from
	raw := string(b[first:i])
	args = make([]string, count)
	for k, s := range spans {
		args[k] = raw[s.from-first : s.to-first]
	}
	return args, i, 0, nil
}

// lenLine reads the "*<n>\r\n" or "$<n>\r\n" line at the start of b: its number and
// length (0 while incomplete), bad when the number is not one. The common line (a
// short one whose CRLF is in the buffer) is found by a scan of its few bytes rather
// than lengthLine's search of the buffer; anything else takes lengthLine, whose errors
// are Redis's.
func lenLine(b []byte, tooBig, bad error) (n, used int, err error) {
	for i := 1; i < len(b) && i <= 22; i++ {
		if b[i] == '\r' || b[i] == '\n' {
			if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				if n, ok := parseLen(b[1:i]); ok {
					return n, i + 2, nil
				}
			}
			break
		}
	}
	l, used, err := lengthLine(b, tooBig, bad)
	if err != nil || used == 0 {
		return 0, 0, err
	}
	n, ok := parseLen(l[1:])
	if !ok {
		return 0, 0, bad
	}
	return n, used, nil
}

// lengthLine is line for "*<n>" and "$<n>" lines: a line ended by a lone LF is bad.
func lengthLine(b []byte, tooBig, bad error) (l []byte, n int, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(b) > maxInline {
			return nil, 0, tooBig
		}
		return nil, 0, nil
	}
	if i == 0 || b[i-1] != '\r' {
		return nil, 0, bad
	}
	return b[:i-1], i + 1, nil
}

// parseLen parses a length: decimal digits with an optional minus sign, nothing else
// (what strconv.Atoi accepts without its '+'), by hand: it runs for every line of
// every request, and Atoi's string conversion and error value were a third of framing.
func parseLen(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > (math.MaxInt-9)/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// frameInline frames one inline request (a line, split on spaces with Redis's quoting
// rules by redcon's parser). A blank line is consumed with no arguments.
func frameInline(b []byte) (args []string, n int, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(b) > maxInline {
			return nil, 0, errBigInline
		}
		return nil, 0, nil
	}
	text := b[:i+1]
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, i + 1, nil
	}
	cmd, perr := redcon.Parse(text)
	if perr != nil {
		// redcon's errors are unexported; their text is Redis's ("Protocol error: ...").
		return nil, 0, &protocolError{strings.TrimPrefix(perr.Error(), "Protocol error: ")}
	}
	args = make([]string, len(cmd.Args))
	for k, a := range cmd.Args {
		args[k] = string(a)
	}
	return args, i + 1, nil
}
