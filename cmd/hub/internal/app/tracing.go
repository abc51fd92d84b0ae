package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// The standard OpenTelemetry variables that switch trace export on (the exporter reads
// them and the other OTEL_EXPORTER_OTLP_* ones itself: headers, timeout, TLS files).
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envTracesExporter     = "OTEL_TRACES_EXPORTER"
	defaultServiceName    = "eventhub"
)

// startTracing installs an OTLP/HTTP trace exporter as the global tracer provider when
// an OTLP endpoint variable is set, so the hub's spans (publish, each delivery attempt,
// each consumer handler: hub/tracing.go) leave the process; without one it does nothing
// and the spans stay no-ops. The resource names the service (OTEL_SERVICE_NAME, default
// "eventhub"; OTEL_RESOURCE_ATTRIBUTES adds more) and the replica (service.instance.id
// = the instance id), so a trace crossing replicas shows which one did what. The
// protocol (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL) is http/protobuf by default (the OTLP
// default; collectors take it on 4318) or grpc (4317; an http:// endpoint is plaintext,
// https:// TLS); http/json, which the Go exporters do not offer, is a start error
// rather than a silent fallback. The returned function flushes and stops the exporter.
func startTracing(ctx context.Context, c *config.Config, env config.Lookup, log *slog.Logger) (func(context.Context) error, error) {
	get := func(k string) string { v, _ := env(k); return strings.TrimSpace(v) }
	endpoint := get(envOTLPTracesEndpoint)
	if endpoint == "" {
		endpoint = get(envOTLPEndpoint)
	}
	if endpoint == "" || get(envTracesExporter) == "none" {
		return func(context.Context) error { return nil }, nil
	}
	protocol := get(envOTLPTracesProtocol)
	if protocol == "" {
		protocol = get(envOTLPProtocol)
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		protocol = "http/protobuf"
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, errors.New("tracing: OTLP protocol " + protocol + " is not supported: use http/protobuf (the default, port 4318 on a collector) or grpc (4317)")
	}
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", defaultServiceName)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithAttributes(attribute.String("service.instance.id", InstanceID(c))))
	if err != nil && res == nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	log.Info("tracing: exporting spans over OTLP", "endpoint", endpoint, "protocol", protocol)
	return tp.Shutdown, nil
}
