package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// statusTransport is one row of GET /transports.
type statusTransport struct {
	Name   string          `json:"name"`
	Type   string          `json:"type"`
	Health string          `json:"health"`
	Status json.RawMessage `json:"status"`
}

// statusStream is the status of a stream transport (streams.StreamStatus).
type statusStream struct {
	Stream string `json:"stream"`
	Length int64  `json:"length"`
	Groups []struct {
		Name    string `json:"name"`
		Pending int64  `json:"pending"`
		Lag     int64  `json:"lag"`
	} `json:"groups"`
}

// statusWebhook is the status of the webhook transport (webhook.Status).
type statusWebhook struct {
	Breakers []struct {
		State string `json:"state"`
	} `json:"breakers"`
}

type statusOutbox struct {
	Destination string `json:"destination"`
	Pending     int64  `json:"pending"`
	Running     int64  `json:"running"`
	Dead        int64  `json:"dead"`
}

func newStatusCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "A running hub at a glance: readiness, each transport, the outbox",
		Long: `status asks a running hub's admin API (GET /readyz, /transports, /outbox) and prints
whether it is ready, each transport's health with what it holds (a stream's length and
each group's pending and lag, the webhook breakers open), and the outbox's pending and
dead rows per destination. It needs an operator's token where the admin API asks for one.

Exit codes: 0 ready, 3 not ready or unreachable, 5 the token was refused.`,
		Example: `  hub status
  hub status --admin-url http://hub.internal:8081 --token "$HUB_ADMIN_TOKEN"`,
		Args: cobra.NoArgs,
	}
	c := adminFlags(cmd, env)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var ready struct {
			Status string `json:"status"`
		}
		readyCode, err := c.getJSON(cmd, "/readyz", &ready)
		if err != nil {
			return err
		}
		var transports []statusTransport
		if _, err := c.getJSON(cmd, "/transports", &transports); err != nil {
			return err
		}
		var outbox []statusOutbox
		hasOutbox := true
		if code, err := c.getJSON(cmd, "/outbox", &outbox); code == http.StatusNotFound {
			hasOutbox = false // no route uses the outbox
		} else if err != nil {
			return err
		}
		printStatus(env.Stdout, ready.Status, transports, outbox, hasOutbox)
		if readyCode != http.StatusOK {
			return silent(ExitUnavailable)
		}
		return nil
	}
	return cmd
}

// getJSON GETs path and decodes a 2xx answer into v; /readyz answers 503 with a body
// when the hub is not ready, which is an answer too (the status is returned).
func (c *adminClient) getJSON(cmd *cobra.Command, path string, v any) (int, error) {
	status, body, err := c.send(cmd, http.MethodGet, path, nil, nil)
	if err != nil {
		return 0, err
	}
	if !(path == "/readyz" && status == http.StatusServiceUnavailable) {
		if err := statusErr(status); err != nil {
			return status, err
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return status, exitf(ExitFailure, "admin API %s: %v", path, err)
	}
	return status, nil
}

// printStatus writes the report: a line for the hub, a table of transports, a table
// of outbox destinations (when a route uses the outbox).
func printStatus(w io.Writer, ready string, transports []statusTransport, outbox []statusOutbox, hasOutbox bool) {
	fmt.Fprintf(w, "hub: %s (%s)\n\n", ready, time.Now().UTC().Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSPORT\tTYPE\tHEALTH\tHOLDS")
	for _, t := range transports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, strings.TrimPrefix(t.Type, "transport."), t.Health, holds(t.Status))
	}
	_ = tw.Flush()
	switch {
	case !hasOutbox:
		return
	case len(outbox) == 0:
		fmt.Fprintln(w, "\noutbox: no row pending or dead")
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OUTBOX TO\tPENDING\tRUNNING\tDEAD")
	for _, o := range outbox {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", o.Destination, o.Pending, o.Running, o.Dead)
	}
	_ = tw.Flush()
}

// holds is a transport status in a few words: a stream's length and groups, the
// webhook's breakers, "-" when the transport reports nothing.
func holds(raw json.RawMessage) string {
	var st statusStream
	if json.Unmarshal(raw, &st) == nil && st.Stream != "" {
		parts := []string{fmt.Sprintf("stream %s: %d entries", st.Stream, st.Length)}
		for _, g := range st.Groups {
			lag := fmt.Sprint(g.Lag)
			if g.Lag < 0 {
				lag = "unknown"
			}
			parts = append(parts, fmt.Sprintf("group %s: %d pending, lag %s", g.Name, g.Pending, lag))
		}
		return strings.Join(parts, "; ")
	}
	var keys map[string]json.RawMessage
	var wh statusWebhook
	if json.Unmarshal(raw, &keys) == nil && keys["breakers"] != nil && json.Unmarshal(raw, &wh) == nil {
		n := map[string]int{}
		for _, b := range wh.Breakers {
			n[b.State]++
		}
		return fmt.Sprintf("breakers: %d closed, %d open, %d half-open", n["closed"], n["open"], n["half_open"])
	}
	return "-"
}
