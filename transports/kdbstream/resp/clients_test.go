package resp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestRESP_RedisCLI runs a round trip with the machine's redis-cli (XGROUP CREATE,
// XADD, XREADGROUP, XACK, XPENDING) against the front, in RESP2 and RESP3 (-3), with
// a password.
func TestRESP_RedisCLI(t *testing.T) {
	t.Parallel()
	cli := requireTool(t, "redis-cli")
	eng := openSQLite(t)
	_, addr := startServer(t, eng, Config{Users: map[string]string{"default": "pw"}})
	host, port, _ := strings.Cut(addr, ":")
	for _, proto := range []string{"-2", "-3"} {
		stream := "cli" + proto
		run := func(args ...string) string {
			t.Helper()
			cmd := exec.Command(cli, append([]string{proto, "-h", host, "-p", port, "--no-auth-warning", "-a", "pw"}, args...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		if got := run("XGROUP", "CREATE", stream, "g", "$", "MKSTREAM"); got != "OK" {
			t.Fatalf("XGROUP CREATE: %q", got)
		}
		id := run("XADD", stream, "*", "type", "user.created")
		if !strings.Contains(id, "-") {
			t.Fatalf("XADD: %q", id)
		}
		if got := run("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "BLOCK", "1000", "STREAMS", stream, ">"); !strings.Contains(got, id) || !strings.Contains(got, "user.created") {
			t.Fatalf("XREADGROUP: %q", got)
		}
		if got := run("XPENDING", stream, "g"); !strings.HasPrefix(got, "1") {
			t.Fatalf("XPENDING before XACK: %q", got)
		}
		if got := run("XACK", stream, "g", id); got != "1" && got != "(integer) 1" {
			t.Fatalf("XACK: %q", got)
		}
		if got := run("XPENDING", stream, "g"); !strings.HasPrefix(got, "0") {
			t.Fatalf("XPENDING after XACK: %q", got)
		}
		if got := run("NOSUCH"); !strings.Contains(got, "unknown command") {
			t.Fatalf("unknown command: %q", got)
		}
	}
	// The keyspace as redis-cli lists it: --scan (SCAN pages to the end), KEYS, DBSIZE.
	cmd := exec.Command(cli, "-h", host, "-p", port, "--no-auth-warning", "-a", "pw", "--scan")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --scan: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); len(got) != 2 || !slices.Contains(got, "cli-2") || !slices.Contains(got, "cli-3") {
		t.Fatalf("redis-cli --scan: %q, want the two streams", got)
	}
	cmd = exec.Command(cli, "-h", host, "-p", port, "--no-auth-warning", "-a", "pw", "--scan", "--pattern", "*-3")
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "cli-3" {
		t.Fatalf("redis-cli --scan --pattern '*-3': %v %q", err, out)
	}
	cmd = exec.Command(cli, "-h", host, "-p", port, "--no-auth-warning", "-a", "pw", "DBSIZE")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "2") {
		t.Fatalf("redis-cli DBSIZE: %v %q", err, out)
	}
	// --bigkeys and --memkeys size every key (TYPE, XLEN or STRLEN, MEMORY USAGE) and
	// name the biggest stream.
	for _, mode := range []string{"--bigkeys", "--memkeys"} {
		cmd = exec.Command(cli, "-h", host, "-p", port, "--no-auth-warning", "-a", "pw", mode)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Biggest stream found") || strings.Contains(string(out), "ERR") {
			t.Fatalf("redis-cli %s: %v\n%s", mode, err, out)
		}
	}
}

// TestRESP_IORedis runs testdata/node/roundtrip.js, an ioredis (npm) client, against
// the front on both databases, and against the machine's Redis for the same replies.
// ioredis is installed from the committed package-lock.json (npm ci) when missing.
func TestRESP_IORedis(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node")
	dir, err := filepath.Abs(filepath.Join("testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ioredis")); err != nil {
		npm := requireTool(t, "npm")
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	roundTrip := func(t *testing.T, port, stream, password string) map[string]any {
		t.Helper()
		args := []string{filepath.Join(dir, "roundtrip.js"), port, stream}
		if password != "" {
			args = append(args, password)
		}
		cmd := exec.Command(node, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("node roundtrip.js: %v\n%s%s", err, out, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("roundtrip.js printed %q: %v", out, err)
		}
		delete(got, "id")
		return got
	}
	stream := "ioredis:" + testenv.Name(t) + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	real := realRedis(t, 2)
	t.Cleanup(func() { real.Del(t.Context(), stream) })
	_, redisPort, _ := strings.Cut(real.Options().Addr, ":")
	want := roundTrip(t, redisPort, stream, real.Options().Password)
	if want["read"] != float64(6) || want["acked"] != float64(6) || want["pendingAfter"] != float64(0) {
		t.Fatalf("against Redis itself: %v", want)
	}
	forEachDB(t, func(t *testing.T, db testDB) {
		_, addr := startServer(t, db.open(t), Config{Users: map[string]string{"default": "pw"}})
		_, port, _ := strings.Cut(addr, ":")
		got := roundTrip(t, port, stream, "pw")
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			t.Fatalf("ioredis round trip differs:\n redis: %s\n front: %s", wj, gj)
		}
	})
}

// requireTool finds an executable; missing, the test fails under CI=true and skips
// with the reason elsewhere.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if testenv.InCI() {
			t.Fatalf("%s is not installed (CI must provide it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}
