package ui

import (
	"net/http"
	"strconv"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
)

// outboxPage is the size of a page of dead outbox rows.
const outboxPage = 50

type outboxData struct {
	Stats       []outbox.DestinationStats
	Dead        []outbox.DeadRow
	Destination string
	Next        string
}

func (c *Console) outboxPage(w http.ResponseWriter, r *http.Request) {
	o := c.cfg.Admin.Outbox
	if o == nil {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no route uses the outbox"))
		return
	}
	ctx := r.Context()
	st, err := o.Stats(ctx)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	q := outbox.DeadQuery{Destination: r.URL.Query().Get("destination"), Limit: outboxPage + 1}
	if a := r.URL.Query().Get("after"); a != "" {
		if q.AfterID, err = strconv.ParseInt(a, 10, 64); err != nil {
			c.fail(w, r, nil, hub.Errorf(hub.InvalidArgument, "after %q: want a row id", a))
			return
		}
	}
	dead, err := o.Dead(ctx, q)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	d := outboxData{Stats: st, Destination: q.Destination}
	if len(dead) > outboxPage {
		dead = dead[:outboxPage]
		d.Next = strconv.FormatInt(dead[len(dead)-1].ID, 10)
	}
	d.Dead = dead
	c.render(w, r, http.StatusOK, "outbox", &page{Title: "Outbox", Nav: "outbox", Data: d})
}

// outboxResend resends the posted row ids, or every dead row (of a destination) with
// all=on.
func (c *Console) outboxResend(w http.ResponseWriter, r *http.Request) {
	o := c.cfg.Admin.Outbox
	if o == nil {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no route uses the outbox"))
		return
	}
	ctx := r.Context()
	_ = r.ParseForm()
	dest := r.PostFormValue("destination")
	var err error
	switch {
	case r.PostFormValue("all") == "on":
		_, err = o.ResendDead(ctx, dest)
	case len(r.PostForm["id"]) > 0:
		for _, s := range r.PostForm["id"] {
			id, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				err = hub.Errorf(hub.InvalidArgument, "row %q: want a number", s)
				break
			}
			if err = o.Resend(ctx, id); err != nil {
				break
			}
		}
	default:
		err = errNoSelection
	}
	c.cfg.Admin.AuditAction(r, "outbox.resend", "outbox/"+dest, "", err)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.redirect(w, r, "outbox", "?", "done", "outbox", "destination", dest)
}
