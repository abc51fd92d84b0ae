package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/redcon"

	"github.com/koder/eventhub/internal/testenv"
)

// chunkReader hands out its input n bytes per Read, as a network splits a pipeline.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}

// readAll frames every request of in, read chunk bytes at a time.
func readAll(in []byte, chunk int, unauthed bool) ([][]string, error) {
	cr := newCmdReader(&chunkReader{in, chunk})
	cr.unauthed = unauthed
	var out [][]string
	for {
		var err error
		out, err = cr.read(out)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
	}
}

func encode(cmds ...[]string) []byte {
	var b []byte
	for _, c := range cmds {
		b = appendHeader(b, '*', len(c))
		for _, a := range c {
			b = appendReply(b, a, 2)
		}
	}
	return b
}

func TestRESP_ReaderFramesRequests(t *testing.T) {
	t.Parallel()
	xadd := []string{"XADD", "s", "*", "f", strings.Repeat("v", 40000)}
	for _, tc := range []struct {
		name string
		in   string
		want [][]string
		err  string
	}{
		{"multibulk", string(encode([]string{"PING"}, []string{"ECHO", "a\r\nb"})), [][]string{{"PING"}, {"ECHO", "a\r\nb"}}, ""},
		{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", [][]string{{"ECHO", ""}}, ""},
		{"large bulk over reads", string(encode(xadd, []string{"PING"})), [][]string{xadd, {"PING"}}, ""},
		{"inline", "PING\r\nECHO \"a b\"\n\r\n   \r\n", [][]string{{"PING"}, {"ECHO", "a b"}}, ""},
		{"empty multibulk skipped", "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}}, ""},
		{"bad count", "*x\r\n", nil, "Protocol error: invalid multibulk length"},
		{"count too large", "*1048577\r\n", nil, "Protocol error: invalid multibulk length"},
		{"not a bulk", "*1\r\n+PING\r\n", nil, "Protocol error: expected '$', got '+'"},
		{"bad bulk length", "*1\r\n$-2\r\n", nil, "Protocol error: invalid bulk length"},
		{"bulk not ended by CRLF", "*1\r\n$4\r\nPINGxx", nil, "Protocol error: invalid bulk length"},
		{"lone LF", "*1\n", nil, "Protocol error: invalid multibulk length"},
		{"unbalanced quotes", "ECHO \"a\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"requests before an error run", "PING\r\n*1\r\n$x\r\n", [][]string{{"PING"}}, "Protocol error: invalid bulk length"},
		{"too big inline", strings.Repeat("a", maxInline+1), nil, "Protocol error: too big inline request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, chunk := range []int{1, 7, 4096, 1 << 20} {
				got, err := readAll([]byte(tc.in), chunk, false)
				if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
					t.Fatalf("chunk %d: error %v, want %q", chunk, err, tc.err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("chunk %d: got %q, want %q", chunk, got, tc.want)
				}
			}
		})
	}
}

// TestRESP_ReaderUnauthenticatedLimits: before AUTH a client may not make the server
// buffer much (Redis's limits), and only one request is framed at a time.
func TestRESP_ReaderUnauthenticatedLimits(t *testing.T) {
	t.Parallel()
	if _, err := readAll(encode(make([]string, 11)), 4096, true); err == nil || !strings.Contains(err.Error(), "unauthenticated multibulk length") {
		t.Fatalf("11 arguments before AUTH: %v", err)
	}
	if _, err := readAll(encode([]string{"AUTH", strings.Repeat("p", 16385)}), 4096, true); err == nil || !strings.Contains(err.Error(), "unauthenticated bulk length") {
		t.Fatalf("a 16 KB argument before AUTH: %v", err)
	}
	cr := newCmdReader(bytes.NewReader(encode([]string{"AUTH", "p"}, []string{"PING"})))
	cr.unauthed = true
	got, err := cr.read(nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("before AUTH: %q, %v; want one request", got, err)
	}
}

// TestRESP_PipelineIsOneAppend: a go-redis pipeline of XADDs is one engine Append (one
// commit) however many reads it takes to arrive, and each XADD keeps its own reply.
func TestRESP_PipelineIsOneAppend(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, openSQLite(t), Config{})
	c := dial(t, addr, 2, nil)
	ctx := testenv.Context(t, 30*time.Second)
	for _, size := range []int{10, 1000} { // ~13 KB and ~1.3 MB of requests per pipeline
		for _, n := range []int{1, 100} {
			before := s.appends.Load()
			p := c.Pipeline()
			adds := make([]*redis.StringCmd, n)
			for i := range adds {
				adds[i] = p.XAdd(ctx, &redis.XAddArgs{Stream: "p", MaxLen: 100000, Approx: true,
					Values: []string{"type", "user.updated", "data", strings.Repeat("x", size)}})
			}
			p.XLen(ctx, "p")
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			for i, a := range adds {
				if a.Val() == "" {
					t.Fatalf("XADD %d of %d: no id", i, n)
				}
			}
			if got := s.appends.Load() - before; got != 1 {
				t.Errorf("pipeline of %d XADDs of %d bytes: %d Appends, want 1", n, size, got)
			}
		}
	}
}

// TestRESP_ProtocolErrorCloses: a malformed request gets Redis's protocol error, after
// the replies of the requests before it, and the connection is closed.
func TestRESP_ProtocolErrorCloses(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, openSQLite(t), Config{})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := nc.Write([]byte("PING\r\n*1\r\n$x\r\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(bufio.NewReader(nc))
	if want := "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzReader: any input, in any split, frames the same requests with the same error
// as read whole; a request redcon parses whole frames to the same arguments.
func FuzzReader(f *testing.F) {
	f.Add(encode([]string{"XADD", "s", "*", "f", "v"}, []string{"PING"}), uint8(3))
	f.Add([]byte("PING\r\nECHO 'a b'\r\n"), uint8(1))
	f.Add([]byte("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*0\r\n"), uint8(5))
	f.Add([]byte("*1\r\n$4\r\nPINGxx"), uint8(2))
	f.Add([]byte("\"unbalanced\r\n"), uint8(9))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		whole, werr := readAll(in, len(in)+1, false)
		split, serr := readAll(in, int(chunk)+1, false)
		if fmt.Sprint(werr) != fmt.Sprint(serr) || !reflect.DeepEqual(whole, split) {
			t.Fatalf("whole: %q, %v; split by %d: %q, %v", whole, werr, int(chunk)+1, split, serr)
		}
		if len(in) == 0 || in[0] != '*' || werr != nil || len(whole) != 1 {
			return
		}
		cmd, err := redcon.Parse(in)
		if err != nil {
			return // redcon refuses what Redis accepts in places ("*1\r\n$0\r\n\r\n" is fine)
		}
		got := make([]string, len(cmd.Args))
		for i, a := range cmd.Args {
			got[i] = string(a)
		}
		if !reflect.DeepEqual(got, whole[0]) {
			t.Fatalf("redcon: %q, ours: %q", got, whole[0])
		}
	})
}
