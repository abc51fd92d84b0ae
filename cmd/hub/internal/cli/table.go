package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// table is how a list command prints its answer with -o table: the JSON key holding
// the rows (an answer that is an array is the rows itself) and the columns, each a
// header and a path into a row ("fields.type" reads a nested object; "a|b" is the first
// of them a row has: a stream DLQ's entries and a RabbitMQ DLQ's differ).
type table struct {
	rows string
	cols []column
}

type column struct{ header, path string }

// cols builds columns from "HEADER=path" pairs.
func cols(specs ...string) []column {
	out := make([]column, len(specs))
	for i, s := range specs {
		h, p, _ := strings.Cut(s, "=")
		out[i] = column{h, p}
	}
	return out
}

// maxCell keeps a table readable: an error or a response body is cut there (the full
// text is in -o json and in the get commands).
const maxCell = 60

// outputFlag registers -o on a list command; *out is "json" (the API's answer,
// indented: what scripts parse) or "table".
func outputFlag(cmd *cobra.Command, out *string) {
	cmd.Flags().StringVarP(out, "output", "o", "json", "json (the API's answer) or table (one row per item, the main columns)")
}

// checkOutput validates the -o value before any request is sent.
func checkOutput(out string) error {
	if out != "json" && out != "table" {
		return exitf(ExitUsage, "-o %q: json or table", out)
	}
	return nil
}

// print writes body (a JSON answer) as the table; an answer without the rows (an
// error's problem details) is printed as JSON.
func (t table) print(w io.Writer, body []byte) error {
	var rows []any
	if json.Unmarshal(body, &rows) != nil { // not an array: the rows are under t.rows
		var obj map[string]json.RawMessage
		if t.rows == "" || json.Unmarshal(body, &obj) != nil || obj[t.rows] == nil || json.Unmarshal(obj[t.rows], &rows) != nil {
			return errNotTable
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, c := range t.cols {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c.header)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		for i, c := range t.cols {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, cell(lookup(r, c.path)))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

var errNotTable = fmt.Errorf("not a listing")

// lookup follows a dotted path through JSON objects, the first of "|"-separated
// alternatives that leads somewhere; nil when none does.
func lookup(row any, paths string) any {
	for _, path := range strings.Split(paths, "|") {
		v := row
		for _, k := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		if v != nil {
			return v
		}
	}
	return nil
}

// cell renders one JSON value on one line: "-" for nothing, lists joined by commas.
func cell(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cell(e)
		}
		s = strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	if s == "" {
		return "-"
	}
	s = strings.Join(strings.Fields(s), " ") // one line, tabs and newlines folded
	if r := []rune(s); len(r) > maxCell {
		s = string(r[:maxCell-1]) + "…"
	}
	return s
}

// The tables of the list commands: the columns an operator scans for, in the answers'
// JSON names.
var (
	endpointsTable  = table{cols: cols("ID=id", "URL=url", "TYPES=types", "TENANT=tenant", "ENABLED=enabled", "CREATED=created_at")}
	deliveriesTable = table{cols: cols("ID=id", "ENDPOINT=endpoint_id", "EVENT=event_id", "TYPE=event_type", "STATE=state",
		"ATTEMPT=attempt", "STATUS=last_status", "ERROR=last_error")}
	dlqTable = table{rows: "entries", cols: cols("ID=id", "TIME=time|at", "TYPE=fields.type|type", "EVENT=fields.event_id|event.id",
		"REASON=reason", "DELIVERIES=deliveries|retries", "ERROR=error")}
	outboxCountsTable = table{cols: cols("DESTINATION=destination", "PENDING=pending", "RUNNING=running", "DEAD=dead")}
	outboxDeadTable   = table{cols: cols("ID=id", "DESTINATION=destination", "EVENT=event_id", "TYPE=event_type", "STATE=state",
		"ATTEMPTS=attempts", "ERRORS=errors")}
	keysTable  = table{rows: "keys", cols: cols("ID=id", "TENANT=tenant_id", "NAME=name", "TYPES=types", "CREATED=created_at", "EXPIRES=expires_at", "REVOKED=revoked_at")}
	auditTable = table{rows: "records", cols: cols("TIME=time", "ACTOR=actor_kind", "ACTOR ID=actor_id", "ACTION=action",
		"OBJECT=object", "TENANT=tenant_id", "OUTCOME=outcome")}
)
