package admin

import (
	"encoding/json"
	"net/http"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
)

type idsBody struct {
	IDs []string `json:"ids"`
	All bool     `json:"all"`
}

func (s *Server) dlqFor(w http.ResponseWriter, r *http.Request) (ops.DLQ, bool) {
	name := r.PathValue("transport")
	t, ok := s.transport(name)
	if !ok {
		writeError(w, http.StatusNotFound, "no transport named "+name)
		return nil, false
	}
	p, ok := t.Module.(ops.DLQProvider)
	if !ok || p.DLQ() == nil {
		writeError(w, http.StatusNotFound, "transport "+name+" ("+t.Type+") has no DLQ")
		return nil, false
	}
	return p.DLQ(), true
}

func (s *Server) dlqRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /dlq/{transport}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := s.dlqFor(w, r)
		if !ok {
			return
		}
		v, err := d.List(r.Context(), intParam(r, "limit", 100))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /dlq/{transport}/{id}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := s.dlqFor(w, r)
		if !ok {
			return
		}
		v, err := d.Inspect(r.Context(), r.PathValue("id"))
		reply(w, v, err)
	})
	for _, op := range []string{"replay", "purge"} {
		mux.HandleFunc("POST /dlq/{transport}/"+op, func(w http.ResponseWriter, r *http.Request) {
			d, ok := s.dlqFor(w, r)
			if !ok {
				return
			}
			var b idsBody
			if raw, err := readBody(r); err != nil || json.Unmarshal(raw, &b) != nil {
				writeError(w, http.StatusBadRequest, `body: {"ids": [...]} or {"all": true}`)
				return
			}
			if len(b.IDs) == 0 && !b.All {
				writeError(w, http.StatusBadRequest, `give "ids" or "all": true`)
				return
			}
			var n int
			var err error
			if op == "replay" {
				n, err = d.Replay(r.Context(), b.IDs, b.All)
			} else {
				n, err = d.Purge(r.Context(), b.IDs, b.All)
			}
			reply(w, map[string]int{op + "ed": n}, err)
		})
	}
}

// webhook returns the webhook module's operations (the first webhook transport).
func (s *Server) webhook(w http.ResponseWriter) (ops.WebhookProvider, bool) {
	for _, t := range s.Transports {
		if p, ok := t.Module.(ops.WebhookProvider); ok {
			return p, true
		}
	}
	writeError(w, http.StatusNotFound, "no webhook transport is configured")
	return nil, false
}

func (s *Server) webhookRoutes(mux *http.ServeMux) {
	ep := func(f func(ops.Endpoints, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if p, ok := s.webhook(w); ok {
				f(p.Endpoints(), w, r)
			}
		}
	}
	mux.HandleFunc("GET /endpoints", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		v, err := e.List(r.Context())
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /endpoints", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := e.Create(r.Context(), body)
		if err == nil {
			writeJSON(w, http.StatusCreated, v)
			return
		}
		reply(w, v, err)
	}))
	mux.HandleFunc("GET /endpoints/{id}", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		v, err := e.Get(r.Context(), r.PathValue("id"))
		reply(w, v, err)
	}))
	mux.HandleFunc("PATCH /endpoints/{id}", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := e.Update(r.Context(), r.PathValue("id"), body)
		reply(w, v, err)
	}))
	mux.HandleFunc("DELETE /endpoints/{id}", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		if err := e.Delete(r.Context(), r.PathValue("id")); err != nil {
			writeErr(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("POST /endpoints/{id}/rotate", ep(func(e ops.Endpoints, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := e.Rotate(r.Context(), r.PathValue("id"), body)
		reply(w, v, err)
	}))
	dl := func(f func(ops.Deliveries, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if p, ok := s.webhook(w); ok {
				f(p.Deliveries(), w, r)
			}
		}
	}
	mux.HandleFunc("GET /deliveries", dl(func(d ops.Deliveries, w http.ResponseWriter, r *http.Request) {
		v, err := d.List(r.Context(), r.URL.Query())
		reply(w, v, err)
	}))
	mux.HandleFunc("GET /deliveries/{id}", dl(func(d ops.Deliveries, w http.ResponseWriter, r *http.Request) {
		v, err := d.Get(r.Context(), r.PathValue("id"))
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /deliveries/resend", dl(func(d ops.Deliveries, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := d.Resend(r.Context(), body)
		reply(w, v, err)
	}))
}

func (s *Server) outboxRoutes(mux *http.ServeMux) {
	ob := func(f func(ops.Outbox, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.Outbox == nil {
				writeError(w, http.StatusNotFound, "no route uses the outbox")
				return
			}
			f(s.Outbox, w, r)
		}
	}
	mux.HandleFunc("GET /outbox", ob(func(o ops.Outbox, w http.ResponseWriter, r *http.Request) {
		v, err := o.Counts(r.Context())
		reply(w, v, err)
	}))
	mux.HandleFunc("GET /outbox/dead", ob(func(o ops.Outbox, w http.ResponseWriter, r *http.Request) {
		v, err := o.Dead(r.Context(), r.URL.Query().Get("destination"), intParam(r, "limit", 100))
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /outbox/resend", ob(func(o ops.Outbox, w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := o.Resend(r.Context(), body)
		reply(w, v, err)
	}))
}

func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
