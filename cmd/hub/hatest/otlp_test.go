//go:build ha

package hatest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/testenv"
)

// otlpReceiver is an OTLP/HTTP trace endpoint (POST /v1/traces, protobuf), enough of a
// collector to see what the hub exports.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	name, traceID, spanID, parentID, instance string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err == nil {
		err = proto.Unmarshal(b, req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.add(req)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// otlpGRPC is the same receiver as an OTLP/gRPC trace service.
type otlpGRPC struct {
	collectortrace.UnimplementedTraceServiceServer
	o *otlpReceiver
}

func (g otlpGRPC) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	g.o.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// add records the spans of one export.
func (o *otlpReceiver) add(req *collectortrace.ExportTraceServiceRequest) {
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		instance := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.instance.id" {
				instance = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				o.spans = append(o.spans, receivedSpan{name: s.Name, traceID: hex.EncodeToString(s.TraceId),
					spanID: hex.EncodeToString(s.SpanId), parentID: hex.EncodeToString(s.ParentSpanId), instance: instance})
			}
		}
	}
	o.mu.Unlock()
}

// trace returns the spans of the trace that contains a span named name... and whose
// names include all of want, or nil.
func (o *otlpReceiver) trace(want ...string) []receivedSpan {
	o.mu.Lock()
	defer o.mu.Unlock()
	byTrace := map[string][]receivedSpan{}
	for _, s := range o.spans {
		byTrace[s.traceID] = append(byTrace[s.traceID], s)
	}
	for _, spans := range byTrace {
		names := map[string]bool{}
		for _, s := range spans {
			names[s.name] = true
		}
		all := true
		for _, w := range want {
			all = all && names[w]
		}
		if all {
			return spans
		}
	}
	return nil
}

// TestHA_OTLP runs the binary with OTEL_EXPORTER_OTLP_ENDPOINT aimed at an in-process
// OTLP receiver. One event posted to the ingress must produce one trace: the ingress's
// publish span, the write to the stream ("send events:#", child of the publish span the
// event carries: appended in the request's transaction, since the stream lives in the
// ledger's SQLite file; the outbox relay's attempt makes the same span when the
// destination needs a row), the stream consumer's
// handler span ("process source", the kdbstream source reading the stream back, also a
// child of that publish), and the handler's own publish, with the replica's instance
// id on the resource.
//
// It runs once per OTLP protocol the binary speaks: http/protobuf (the default) and
// grpc.
func TestHA_OTLP(t *testing.T) {
	t.Parallel()
	t.Run("HTTP", func(t *testing.T) {
		t.Parallel()
		rcv := &otlpReceiver{}
		srv := httptest.NewServer(rcv)
		t.Cleanup(srv.Close)
		testOTLP(t, rcv, "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL)
	})
	t.Run("GRPC", func(t *testing.T) {
		t.Parallel()
		rcv := &otlpReceiver{}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		collectortrace.RegisterTraceServiceServer(gs, otlpGRPC{o: rcv})
		go func() { _ = gs.Serve(ln) }()
		t.Cleanup(gs.Stop)
		// An http:// endpoint is plaintext gRPC (the exporter's rule).
		testOTLP(t, rcv, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc")
	})
}

// testOTLP is TestHA_OTLP against rcv, the exporter configured by env.
func testOTLP(t *testing.T, rcv *otlpReceiver, env ...string) {
	dir := t.TempDir()
	bin := buildHub(t, dir)
	r := &replica{tb: t, name: "otlp", bin: bin, dir: dir, ingress: freeAddr(t), admin: freeAddr(t)}
	r.config = func(consumer string) string {
		return fmt.Sprintf(`
instance_id: replica-otlp
store:
  sqlite: %[1]s
sources:
  ingress: {type: http, listen: "%[2]s"}
  source:
    type: kdbstream
    stream: events
    group: ha-trace
    consumer: %[3]s
    block: 200ms
transports:
  events: {type: kdbstream, stream: events}
routes:
  - {pattern: "#", to: [events], delivery: outbox}
admin: {listen: "%[4]s"}
`, filepath.Join(dir, "hub.db"), r.ingress, consumer, r.admin)
	}
	t.Cleanup(r.stopAtCleanup)
	r.env = append(env, "OTEL_BSP_SCHEDULE_DELAY=100") // ms: export soon after each span
	r.start()

	if status, body, err := postJSON("http://"+r.ingress+"/events", erasedEvent(cloudevent.NewID())); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST: %d %v %s", status, err, body)
	}
	want := []string{"publish", "send events:#", "process source"}
	var spans []receivedSpan
	t.Cleanup(func() {
		if t.Failed() {
			rcv.mu.Lock()
			for _, s := range rcv.spans {
				t.Logf("received %s trace %s parent %s", s.name, s.traceID, s.parentID)
			}
			rcv.mu.Unlock()
			t.Logf("hub log:\n%s", r.log())
		}
	})
	testenv.WaitFor(t, 30*time.Second, "one trace with "+strings.Join(want, ", "), func() bool {
		spans = rcv.trace(want...)
		return spans != nil
	})
	if code := r.term(); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, r.log())
	}
	spans = rcv.trace(want...) // with what the shutdown flushed
	sort.Slice(spans, func(i, j int) bool { return spans[i].parentID < spans[j].parentID })
	ids := map[string]receivedSpan{}
	for _, s := range spans {
		ids[s.spanID] = s
		t.Logf("span %-16s id %s parent %s instance %s", s.name, s.spanID, s.parentID, s.instance)
		if s.instance != "replica-otlp" {
			t.Errorf("span %s: service.instance.id %q, want replica-otlp", s.name, s.instance)
		}
	}
	// The chain: send events and process source each have a parent in the trace.
	for _, name := range want[1:] {
		for _, s := range spans {
			if s.name == name {
				if _, ok := ids[s.parentID]; !ok {
					t.Errorf("span %s has no parent in the trace (parent %s)", name, s.parentID)
				}
				break
			}
		}
	}
}
