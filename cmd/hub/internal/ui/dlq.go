package ui

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/admin"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/rabbitmq"
)

// errNoSelection: a replay or purge with no entry chosen.
var errNoSelection = hub.Errorf(hub.InvalidArgument, "choose entries, or tick \"every entry\"")

// dlqPage is the size of a page of dead letters.
const dlqPage = 50

// deadLetter is a dead letter of any stream transport, as the pages show it.
type deadLetter struct {
	ID, Type, EventID, Tenant string
	Reason, Error             string
	Source, Group, OriginalID string
	Deliveries                int64
	At                        time.Time
	Fields                    []field // the entry's fields (R2) or headers, sorted
	Body                      string  // RabbitMQ: the message body
}

type field struct{ K, V string }

func fieldsOf(m map[string]string) []field {
	out := make([]field, 0, len(m))
	for k, v := range m {
		out = append(out, field{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].K < out[j].K })
	return out
}

// viewDeadLetter flattens the libraries' two DeadLetter types: the stream buses'
// (streams.DeadLetter, Redis and kdbstream) and RabbitMQ's.
func viewDeadLetter(e any) deadLetter {
	switch v := e.(type) {
	case *streams.DeadLetter:
		return viewDeadLetter(*v)
	case *rabbitmq.DeadLetter:
		return viewDeadLetter(*v)
	case streams.DeadLetter:
		return deadLetter{ID: v.ID, At: v.Time, Type: v.Fields[cloudevent.FieldType], EventID: v.Fields[cloudevent.FieldEventID],
			Tenant: v.Fields[cloudevent.FieldTenantID], Reason: v.Reason, Error: v.Error, Source: v.SourceStream, Group: v.Group,
			OriginalID: v.OriginalID, Deliveries: v.Deliveries, Fields: fieldsOf(v.Fields)}
	case rabbitmq.DeadLetter:
		d := deadLetter{ID: v.ID, At: v.At, Type: v.Type, EventID: v.ID, Reason: v.Reason, Error: v.Error, Source: v.Queue,
			OriginalID: v.RoutingKey, Deliveries: int64(v.Retries) + 1, Body: string(v.Body)}
		if v.Event != nil {
			d.Tenant = v.Event.TenantID()
		}
		hs := map[string]string{}
		for k, x := range v.Headers {
			hs[k] = funcs["str"].(func(any) string)(x)
		}
		d.Fields = fieldsOf(hs)
		return d
	}
	return deadLetter{}
}

type dlqIndexRow struct {
	Name, Type string
	Stream     string
	Total      int64
	Error      string
}

func (c *Console) dlqIndex(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var rows []dlqIndexRow
	for _, t := range c.cfg.Admin.DLQNames() {
		row := dlqIndexRow{Name: t.Name, Type: t.Type}
		d, err := c.cfg.Admin.DLQ(ctx, t.Name)
		if err == nil {
			var p admin.DLQPage
			p, err = d.List(ctx, "", 1)
			row.Stream, row.Total = p.Stream, p.Total
		}
		if err != nil {
			row.Error = err.Error()
		}
		rows = append(rows, row)
	}
	c.render(w, r, http.StatusOK, "dlq", &page{Title: "Dead letters", Nav: "dlq", Data: rows})
}

type dlqListData struct {
	Name    string
	Stream  string
	Total   int64
	Entries []deadLetter
	Next    string
}

func (c *Console) dlqList(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	d, err := c.cfg.Admin.DLQ(r.Context(), name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	p, err := d.List(r.Context(), r.URL.Query().Get("after"), dlqPage+1)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	data := dlqListData{Name: name, Stream: p.Stream, Total: p.Total}
	for _, e := range p.Entries {
		data.Entries = append(data.Entries, viewDeadLetter(e))
	}
	if len(data.Entries) > dlqPage {
		data.Entries = data.Entries[:dlqPage]
		data.Next = data.Entries[dlqPage-1].ID
	}
	c.render(w, r, http.StatusOK, "dlq_list", &page{Title: "Dead letters of " + name, Nav: "dlq", Data: data})
}

type dlqEntryData struct {
	Name string
	E    deadLetter
}

func (c *Console) dlqEntry(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	d, err := c.cfg.Admin.DLQ(r.Context(), name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	e, err := d.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.render(w, r, http.StatusOK, "dlq_entry", &page{Title: "Dead letter " + r.PathValue("id"), Nav: "dlq",
		Data: dlqEntryData{Name: name, E: viewDeadLetter(e)}})
}

// dlqReplay replays the posted ids, or every entry with all=on.
func (c *Console) dlqReplay(w http.ResponseWriter, r *http.Request) { c.dlqAct(w, r, "replay") }

// dlqPurge purges the posted ids, or every entry with all=on.
func (c *Console) dlqPurge(w http.ResponseWriter, r *http.Request) { c.dlqAct(w, r, "purge") }

func (c *Console) dlqAct(w http.ResponseWriter, r *http.Request, op string) {
	name := r.PathValue("name")
	ctx := r.Context()
	d, err := c.cfg.Admin.DLQ(ctx, name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	_ = r.ParseForm()
	ids, all := r.PostForm["id"], r.PostFormValue("all") == "on"
	switch {
	case op == "replay" && all:
		_, err = d.ReplayAll(ctx)
	case op == "replay" && len(ids) > 0:
		_, err = d.Replay(ctx, ids)
	case all:
		_, err = d.Purge(ctx, nil)
	case len(ids) > 0:
		_, err = d.Purge(ctx, ids)
	default:
		c.fail(w, r, nil, errNoSelection)
		return
	}
	c.cfg.Admin.AuditAction(r, "dlq."+op, "dlq/"+name, admin.ScopedTenant(ctx), err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "dlq", name, "?", "done", map[string]string{"replay": "replayed", "purge": "purged"}[op])
}
