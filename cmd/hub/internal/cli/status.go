package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/outbox"
	hubstreams "github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/webhook"
)

// statusTransport is one row of GET /transports.
type statusTransport struct {
	Name   string          `json:"name"`
	Type   string          `json:"type"`
	Health string          `json:"health"`
	Status json.RawMessage `json:"status"`
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
		// 503 is an answer too: the hub is not ready, and the body says why.
		readyCode, err := c.getJSON(cmd, "/readyz", &ready, http.StatusServiceUnavailable)
		if err != nil {
			return err
		}
		var transports []statusTransport
		if _, err := c.getJSON(cmd, "/transports", &transports); err != nil {
			return err
		}
		var dests []outbox.DestinationStats
		hasOutbox := true
		if code, err := c.getJSON(cmd, "/outbox", &dests); code == http.StatusNotFound {
			hasOutbox = false // no route uses the outbox
		} else if err != nil {
			return err
		}
		printStatus(env.Stdout, ready.Status, transports, dests, hasOutbox)
		if readyCode != http.StatusOK {
			return silent(ExitUnavailable)
		}
		return nil
	}
	return cmd
}

// getJSON GETs path and decodes the answer into v when it is a 2xx or one of also;
// the status is returned either way.
func (c *adminClient) getJSON(cmd *cobra.Command, path string, v any, also ...int) (int, error) {
	status, body, err := c.send(cmd, http.MethodGet, path, nil, nil)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(also, status) {
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
func printStatus(w io.Writer, ready string, transports []statusTransport, dests []outbox.DestinationStats, hasOutbox bool) {
	fmt.Fprintf(w, "hub: %s (%s)\n\n", ready, time.Now().UTC().Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSPORT\tTYPE\tHEALTH\tHOLDS")
	for _, t := range transports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, strings.TrimPrefix(t.Type, "transport."), t.Health, holds(t))
	}
	_ = tw.Flush()
	switch {
	case !hasOutbox:
		return
	case len(dests) == 0:
		fmt.Fprintln(w, "\noutbox: no row pending or dead")
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OUTBOX TO\tPENDING\tRUNNING\tDEAD")
	for _, o := range dests {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", o.Destination, o.Pending, o.Running, o.Dead)
	}
	_ = tw.Flush()
}

// holds is a transport status in a few words: a stream's length and groups, the
// webhook's breakers, "-" when the transport reports nothing. The status is decoded
// into the transports' own types (streams.StreamStatus, webhook.Status).
func holds(t statusTransport) string {
	if t.Type == "transport.webhook" {
		var wh webhook.Status
		if json.Unmarshal(t.Status, &wh) != nil {
			return "-"
		}
		n := map[webhook.BreakerState]int{}
		for _, b := range wh.Breakers {
			n[b.State]++
		}
		return fmt.Sprintf("breakers: %d closed, %d open, %d half-open",
			n[webhook.BreakerClosed], n[webhook.BreakerOpen], n[webhook.BreakerHalfOpen])
	}
	var st hubstreams.StreamStatus
	if json.Unmarshal(t.Status, &st) != nil || st.Stream == "" {
		return "-"
	}
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
