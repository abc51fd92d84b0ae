package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// TestHA_TracingConfig: no endpoint (or OTEL_TRACES_EXPORTER=none) means no exporter;
// a protocol the binary does not carry is a start error, not a silent fallback. The
// export itself is TestHA_OTLP (cmd/hub/hatest), against the real binary.
func TestHA_TracingConfig(t *testing.T) {
	t.Parallel()
	lookup := func(vars map[string]string) config.Lookup {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	log := slog.New(slog.DiscardHandler)
	for _, vars := range []map[string]string{
		{},
		{envOTLPEndpoint: "http://127.0.0.1:1", envTracesExporter: "none"},
	} {
		stop, err := startTracing(context.Background(), &config.Config{}, lookup(vars), log)
		if err != nil || stop == nil {
			t.Fatalf("%v: %v", vars, err)
		}
		if err := stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	_, err := startTracing(context.Background(), &config.Config{}, lookup(map[string]string{
		envOTLPTracesEndpoint: "http://127.0.0.1:1", envOTLPProtocol: "http/json"}), log)
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") || !strings.Contains(err.Error(), "grpc") {
		t.Fatalf("http/json protocol: %v, want an error naming http/protobuf and grpc", err)
	}
}
