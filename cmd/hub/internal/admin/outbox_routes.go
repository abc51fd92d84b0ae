package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/outbox"
)

// outboxResendBody is POST /outbox/resend: ids, or every dead row (of a destination).
type outboxResendBody struct {
	IDs         []json.Number `json:"ids"`
	Destination string        `json:"destination"`
	All         bool          `json:"all"`
}

func (s *Server) outboxRoutes(mux *http.ServeMux) {
	ob := func(f func(o *outbox.Outbox, w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.Outbox == nil {
				writeError(w, http.StatusNotFound, "no route uses the outbox")
				return
			}
			f(s.Outbox, w, r)
		}
	}
	mux.HandleFunc("GET /outbox", ob(func(o *outbox.Outbox, w http.ResponseWriter, r *http.Request) {
		st, err := o.Stats(r.Context())
		if st == nil {
			st = []outbox.DestinationStats{}
		}
		reply(w, st, err)
	}))
	mux.HandleFunc("GET /outbox/dead", ob(func(o *outbox.Outbox, w http.ResponseWriter, r *http.Request) {
		rows, err := o.Dead(r.Context(), outbox.DeadQuery{Destination: r.URL.Query().Get("destination"), Limit: intParam(r, "limit", DefaultListLimit)})
		if rows == nil {
			rows = []outbox.DeadRow{}
		}
		reply(w, rows, err)
	}))
	mux.HandleFunc("POST /outbox/resend", ob(func(o *outbox.Outbox, w http.ResponseWriter, r *http.Request) {
		raw, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		var b outboxResendBody
		if err := json.Unmarshal(raw, &b); err != nil {
			writeErr(w, hub.Errorf(hub.InvalidArgument, "body: %v", err))
			return
		}
		n, err := resendRows(r, o, b)
		s.done(w, r, "outbox.resend", "outbox/"+b.Destination, "", http.StatusOK, resentReply{Resent: n}, err)
	}))
}

// resendRows delivers dead rows again: every one (of the destination), or the ids,
// each on its own (one that fails does not stop the others).
func resendRows(r *http.Request, o *outbox.Outbox, b outboxResendBody) (int, error) {
	if b.All {
		return o.ResendDead(r.Context(), b.Destination)
	}
	if len(b.IDs) == 0 {
		return 0, hub.Errorf(hub.InvalidArgument, `give "ids" or "all": true`)
	}
	n := 0
	var errs []error
	for _, s := range b.IDs {
		id, err := strconv.ParseInt(string(s), 10, 64)
		if err == nil {
			err = o.Resend(r.Context(), id)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
