package admin

import (
	"net/http"

	"github.com/koder/eventhub/auth"
)

type auditPage struct {
	Records []auth.AuditRecord `json:"records"`
	Next    string             `json:"next,omitempty"`
}

// auditRoutes serve the audit trail, newest first: GET /audit?tenant=&actor=&object=
// &action=&since=&until=&limit=&before=. A tenant-scoped caller reads its own tenant's
// records whatever it asks for (AuditQuery.ScopedTo).
func (s *Server) auditRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /audit", func(w http.ResponseWriter, r *http.Request) {
		if s.AuditStore == nil {
			writeError(w, http.StatusNotFound, "the audit trail is kept in the store (store.sqlite or store.postgres); without one it is in the logs only")
			return
		}
		q := r.URL.Query()
		aq := auth.AuditQuery{Tenant: q.Get("tenant"), ActorID: q.Get("actor"), Object: q.Get("object"), Action: q.Get("action"),
			Limit: intParam(r, "limit", DefaultListLimit), Before: q.Get("before")}
		var err error
		if aq.Since, err = parseTime(q.Get("since")); err != nil {
			writeErr(w, err)
			return
		}
		if aq.Until, err = parseTime(q.Get("until")); err != nil {
			writeErr(w, err)
			return
		}
		p, _ := auth.FromContext(r.Context())
		recs, next, err := s.AuditStore.List(r.Context(), aq.ScopedTo(p))
		if recs == nil {
			recs = []auth.AuditRecord{}
		}
		reply(w, auditPage{Records: recs, Next: next}, err)
	})
}
