package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// controlFlags are the delivery-control flags of `hub endpoints create` and `update`.
// Each flag given sets its control (members of the body's "controls"); on update, the
// controls not named stay as they are.
type controlFlags struct {
	filter, sigScheme, sigHeader, orderKey, onDead, proxy string
	tlsCert, tlsKey, tlsCA, tlsMin                        string
	headers                                               []string
	rps                                                   float64
	burst, maxQueued, maxInFlight                         int
	ordered                                               bool
}

func (f *controlFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.filter, "filter", "", "CESQL filter events must satisfy, e.g. \"data.plan = 'pro'\" (\"\" removes it)")
	fl.StringArrayVar(&f.headers, "header", nil, "static request header Name=value (repeatable; --header '' removes them all)")
	fl.StringVar(&f.sigScheme, "signature-scheme", "", "signing scheme: eventhub, standard or stripe")
	fl.StringVar(&f.sigHeader, "signature-header", "", "signature header name (eventhub and stripe schemes)")
	fl.Float64Var(&f.rps, "rate", 0, "rate limit, requests per second across replicas (0: none)")
	fl.IntVar(&f.burst, "burst", 0, "requests allowed at once under --rate (default 1)")
	fl.BoolVar(&f.ordered, "ordered", false, "deliver one key at a time, in order (--ordered=false turns it off)")
	fl.StringVar(&f.orderKey, "order-key", "", "ordering key: subject (default) or an extension name")
	fl.StringVar(&f.onDead, "on-dead", "", "a dead delivery of an ordered key: hold (default) or skip")
	fl.StringVar(&f.proxy, "proxy", "", "HTTP CONNECT proxy for this endpoint, http://host:port (\"\" : the transport's)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM file of the client certificate (mTLS)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM file of its private key (stored encrypted)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the CAs trusted for the receiver")
	fl.StringVar(&f.tlsMin, "tls-min-version", "", "lowest TLS version: 1.2 (default) or 1.3")
	fl.IntVar(&f.maxQueued, "max-queued", 0, "cap on deliveries waiting for this endpoint (0: the transport's)")
	fl.IntVar(&f.maxInFlight, "max-in-flight", 0, "cap on requests open to this endpoint at once, per replica (0: the transport's)")
}

// body is the "controls" member for the flags the command was given.
func (f *controlFlags) body(cmd *cobra.Command) (map[string]any, error) {
	b := map[string]any{}
	changed := cmd.Flags().Changed
	if changed("tls-cert") || changed("tls-key") || changed("tls-ca") || changed("tls-min-version") {
		t := map[string]string{"min_version": f.tlsMin}
		for name, path := range map[string]string{"client_cert": f.tlsCert, "client_key": f.tlsKey, "ca": f.tlsCA} {
			if path == "" {
				continue
			}
			pemText, err := os.ReadFile(path)
			if err != nil {
				return nil, exitf(ExitUsage, "%v", err)
			}
			t[name] = string(pemText)
		}
		b["tls"] = t
	}
	if changed("filter") {
		b["filter"] = f.filter
	}
	if changed("header") {
		h := map[string]string{}
		for _, kv := range f.headers {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				h[k] = v
			} else if kv != "" {
				h[kv] = "" // the server refuses it with a clear message
			}
		}
		b["headers"] = h
	}
	if changed("signature-scheme") || changed("signature-header") {
		b["signature"] = map[string]string{"scheme": f.sigScheme, "header": f.sigHeader}
	}
	if changed("rate") || changed("burst") {
		b["rate_limit"] = map[string]any{"rps": f.rps, "burst": f.burst}
	}
	if changed("ordered") || changed("order-key") || changed("on-dead") {
		b["ordering"] = map[string]any{"enabled": f.ordered || changed("order-key") || changed("on-dead"), "key": f.orderKey, "on_dead": f.onDead}
	}
	if changed("proxy") {
		b["proxy"] = f.proxy
	}
	if changed("max-queued") {
		b["max_queued"] = f.maxQueued
	}
	if changed("max-in-flight") {
		b["max_in_flight"] = f.maxInFlight
	}
	return b, nil
}
