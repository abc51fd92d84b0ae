package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cloudevent"
)

// DefaultIngressURL is where publish posts without --url or HUB_INGRESS_URL.
const DefaultIngressURL = "http://127.0.0.1:8080/events"

type publishFlags struct {
	url, file                           string
	typ, source, subject, tenant, actor string
	id, data, dataVersion, correlation  string
	contentType                         string
	key                                 string
	timeout                             time.Duration
}

func newPublishCmd(env *Env) *cobra.Command {
	f := &publishFlags{}
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Send an event (from flags or a file) to a hub's HTTP ingress",
		Long: `publish posts one CloudEvent built from flags, or the CloudEvent JSON (an object, or an
array for a batch) in --file, to the ingress URL, and prints what the hub answered.

The ingress URL is --url, else $HUB_INGRESS_URL, else ` + DefaultIngressURL + `.
The credential is --key, else $HUB_API_KEY: an API key (hub keys create) or a JWT, sent
as Authorization: Bearer; an ingress on a loopback address without auth needs none.
Exit codes: 0 accepted (202), 1 rejected (4xx, the problem details are printed),
5 the credential was refused (401, 403), 3 the ingress is unreachable, answered 5xx or
429 (retry later), 2 usage.`,
		Example: `  hub publish --type identity.user.erased --tenant acme \
    --data '{"erasure_id":"era_1","user_id":"u1","erased_at":"2026-01-01T00:00:00Z"}'
  hub publish --file event.json
  hub publish --file batch.json --url http://hub.internal:8080/events
  cat event.json | hub publish --file -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPublish(cmd, env, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "ingress URL (default $HUB_INGRESS_URL or "+DefaultIngressURL+")")
	fl.StringVarP(&f.file, "file", "f", "", "CloudEvent JSON file (object or batch array); - reads stdin")
	fl.StringVarP(&f.typ, "type", "t", "", "event type, e.g. identity.user.erased")
	fl.StringVar(&f.source, "source", "hub-cli", "event source")
	fl.StringVar(&f.subject, "subject", "", "event subject")
	fl.StringVar(&f.tenant, "tenant", "", "tenantid extension")
	fl.StringVar(&f.actor, "actor", "", "actor extension: system, user:<id>, admin:<id>")
	fl.StringVar(&f.id, "id", "", "event id (default a fresh evt_<ULID>)")
	fl.StringVarP(&f.data, "data", "d", "", "data: JSON text, or @file to read it")
	fl.StringVar(&f.dataVersion, "data-version", "", "dataversion extension (payload schema semver)")
	fl.StringVar(&f.correlation, "correlation-id", "", "correlationid extension")
	fl.StringVar(&f.contentType, "content-type", "application/json", "datacontenttype of --data")
	fl.StringVar(&f.key, "key", "", "API key or JWT (default $HUB_API_KEY)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "request timeout")
	return cmd
}

func runPublish(cmd *cobra.Command, env *Env, f *publishFlags) error {
	url := f.url
	if url == "" {
		url, _ = env.Lookup("HUB_INGRESS_URL")
	}
	if url == "" {
		url = DefaultIngressURL
	}
	var body []byte
	contentType := "application/cloudevents+json"
	switch {
	case f.file != "" && f.typ != "":
		return exitf(ExitUsage, "use either --file or --type (with --data), not both")
	case f.file != "":
		var err error
		if f.file == "-" {
			body, err = io.ReadAll(env.Stdin)
		} else {
			body, err = os.ReadFile(f.file)
		}
		if err != nil {
			return exitf(ExitUsage, "read %s: %v", f.file, err)
		}
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			contentType = "application/cloudevents-batch+json"
		}
	case f.typ != "":
		b, err := eventFromFlags(f)
		if err != nil {
			return err
		}
		body = b
	default:
		return exitf(ExitUsage, "give --type (and --data) or --file")
	}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return exitf(ExitUsage, "bad --url: %v", err)
	}
	req.Header.Set("Content-Type", contentType)
	key := f.key
	if key == "" {
		key, _ = env.Lookup("HUB_API_KEY")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: f.timeout}).Do(req)
	if err != nil {
		return exitf(ExitUnavailable, "ingress unreachable: %v", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fmt.Fprintf(env.Stdout, "%s\n", strings.TrimSpace(string(out)))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return exitf(ExitUnavailable, "ingress answered %s", resp.Status)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return exitf(ExitDenied, "ingress answered %s (check --key / HUB_API_KEY)", resp.Status)
	default:
		return exitf(ExitInvalid, "ingress answered %s", resp.Status)
	}
}

// eventFromFlags builds a structured-mode CloudEvent JSON object.
func eventFromFlags(f *publishFlags) ([]byte, error) {
	ev := map[string]any{
		"specversion": "1.0",
		"id":          f.id,
		"source":      f.source,
		"type":        f.typ,
		"time":        time.Now().UTC().Format(time.RFC3339Nano),
	}
	if f.id == "" {
		ev["id"] = cloudevent.NewID()
	}
	for k, v := range map[string]string{"subject": f.subject, cloudevent.ExtTenantID: f.tenant, cloudevent.ExtActor: f.actor,
		cloudevent.ExtDataVersion: f.dataVersion, cloudevent.ExtCorrelationID: f.correlation} {
		if v != "" {
			ev[k] = v
		}
	}
	data := f.data
	if strings.HasPrefix(data, "@") {
		b, err := os.ReadFile(data[1:])
		if err != nil {
			return nil, exitf(ExitUsage, "read --data %s: %v", data[1:], err)
		}
		data = string(b)
	}
	if data != "" {
		ev["datacontenttype"] = f.contentType
		if isJSONType(f.contentType) {
			if !json.Valid([]byte(data)) {
				return nil, exitf(ExitUsage, "--data is not valid JSON")
			}
			ev["data"] = json.RawMessage(data)
		} else {
			ev["data"] = data
		}
	}
	return json.Marshal(ev)
}

func isJSONType(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(ct)
	return ct == "application/json" || ct == "text/json" || strings.HasSuffix(ct, "+json")
}
