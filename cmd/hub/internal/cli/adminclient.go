package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// DefaultAdminURL is the admin API of the embedded default.
const DefaultAdminURL = "http://127.0.0.1:8081"

// DefaultAdminTimeout bounds one admin call (--timeout): a bulk resend of a large
// outage's dead deliveries runs for seconds, a hung hub should not hold a script forever.
const DefaultAdminTimeout = 30 * time.Second

// maxAdminReply caps the answer the CLI reads: a listing at its largest page is a few
// megabytes; anything larger is not an admin API talking.
const maxAdminReply = 32 << 20

// adminClient calls a running hub's admin API: the dlq, endpoints, deliveries and outbox
// commands are thin clients of it, so the CLI and any other tool see the same operations.
type adminClient struct {
	env     *Env
	baseURL string
	token   string
	timeout time.Duration
}

func adminFlags(cmd *cobra.Command, env *Env) *adminClient {
	c := &adminClient{env: env}
	cmd.PersistentFlags().StringVar(&c.baseURL, "admin-url", "", "admin API base URL (default $HUB_ADMIN_URL or "+DefaultAdminURL+")")
	cmd.PersistentFlags().StringVar(&c.token, "token", "", "admin bearer token or link token (default $HUB_ADMIN_TOKEN, its first token)")
	cmd.PersistentFlags().DurationVar(&c.timeout, "timeout", DefaultAdminTimeout, "request timeout")
	return c
}

func (c *adminClient) url(path string, q url.Values) string {
	base := c.baseURL
	if base == "" {
		base, _ = c.env.Lookup("HUB_ADMIN_URL")
	}
	if base == "" {
		base = DefaultAdminURL
	}
	u := strings.TrimRight(base, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// do sends a request and prints the JSON answer indented. Status codes map to exit codes.
func (c *adminClient) do(cmd *cobra.Command, method, path string, q url.Values, body any) error {
	return c.call(cmd, method, path, q, body, nil)
}

// list is do for a list command with -o: output "table" prints a 2xx answer as tbl.
func (c *adminClient) list(cmd *cobra.Command, output string, tbl table, path string, q url.Values) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == "table" {
		return c.call(cmd, http.MethodGet, path, q, nil, &tbl)
	}
	return c.call(cmd, http.MethodGet, path, q, nil, nil)
}

// call is do, printing a 2xx answer as tbl when tbl is set.
func (c *adminClient) call(cmd *cobra.Command, method, path string, q url.Values, body any, tbl *table) error {
	status, out, err := c.send(cmd, method, path, q, body)
	if err != nil {
		return err
	}
	if tbl == nil || status/100 != 2 || tbl.print(c.env.Stdout, out) != nil {
		var pretty bytes.Buffer
		if json.Indent(&pretty, out, "", "  ") == nil {
			out = pretty.Bytes()
		}
		if len(bytes.TrimSpace(out)) > 0 {
			fmt.Fprintln(c.env.Stdout, strings.TrimSpace(string(out)))
		}
	}
	return statusErr(status)
}

// send makes one request of the admin API (JSON body when body is set, the bearer
// token) and returns the answer's status and body.
func (c *adminClient) send(cmd *cobra.Command, method, path string, q url.Values, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(cmd.Context(), method, c.url(path, q), rd)
	if err != nil {
		return 0, nil, exitf(ExitUsage, "bad admin URL: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok := c.bearer(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := (&http.Client{Timeout: c.timeout}).Do(req)
	if err != nil {
		return 0, nil, exitf(ExitUnavailable, "admin API unreachable: %v", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, maxAdminReply))
	return resp.StatusCode, out, nil
}

// statusErr maps an admin API status to the command's exit: nil for 2xx.
func statusErr(status int) error {
	text := fmt.Sprintf("%d %s", status, http.StatusText(status))
	switch {
	case status/100 == 2:
		return nil
	case status == http.StatusNotFound:
		return exitf(ExitNotFound, "admin API: %s", text)
	case status == http.StatusUnauthorized:
		return exitf(ExitDenied, "admin API: %s (check --token / HUB_ADMIN_TOKEN)", text)
	case status == http.StatusForbidden:
		return exitf(ExitDenied, "admin API: %s", text)
	case status == http.StatusServiceUnavailable || status == http.StatusNotImplemented:
		return exitf(ExitUnavailable, "admin API: %s", text)
	case status/100 == 4:
		return exitf(ExitInvalid, "admin API: %s", text)
	}
	return exitf(ExitFailure, "admin API: %s", text)
}

// bearer is the credential to send: --token, else the first of HUB_ADMIN_TOKEN (the hub
// accepts several there during a rotation; a client sends the first).
func (c *adminClient) bearer() string {
	if c.token != "" {
		return c.token
	}
	env, _ := c.env.Lookup("HUB_ADMIN_TOKEN")
	if f := strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }); len(f) > 0 {
		return f[0]
	}
	return ""
}

// sub builds a subcommand whose RunE calls the admin API.
func sub(use, short, example string, args cobra.PositionalArgs, run func(cmd *cobra.Command, args []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Example: example, Args: args, RunE: run}
}

// query builds url.Values from non-empty pairs.
func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}
