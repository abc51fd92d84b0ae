package admin

import (
	"net/http"
	"net/url"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
)

// PortalPath is where the console serves the tenant portal.
const PortalPath = "/ui/portal"

type linkBody struct {
	Tenant string   `json:"tenant"`
	Scopes []string `json:"scopes"` // read (default), write
	TTL    string   `json:"ttl"`    // default auth.links.ttl, else 24h; at most 720h
}

type linkReply struct {
	Token     string    `json:"token"`
	ID        string    `json:"id"`
	Tenant    string    `json:"tenant"`
	Scopes    string    `json:"scopes"`
	ExpiresAt time.Time `json:"expires_at"`
	// Portal is the tenant portal's path on this listener with the link (when the
	// console is served): hand out the admin URL followed by it.
	Portal string `json:"portal,omitempty"`
}

// linkRoutes issue link tokens: signed, expiring credentials scoped to one tenant, for
// URLs handed to that tenant (?link=...), and revoke one by its id before it expires.
// Operator-only (access.go).
func (s *Server) linkRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /links", func(w http.ResponseWriter, r *http.Request) {
		var b linkBody
		if !decodeBody(w, r, &b) {
			return
		}
		if s.Links == nil {
			s.done(w, r, "link.issue", "", b.Tenant, 0, nil,
				hub.Errorf(hub.FailedPrecondition, "link tokens are signed with a key derived from the secret key: set HUB_SECRET_KEY or secrets.key_file"))
			return
		}
		ttl := s.LinkTTL
		if b.TTL != "" {
			d, err := time.ParseDuration(b.TTL)
			if err != nil || d <= 0 {
				writeErr(w, hub.Errorf(hub.InvalidArgument, "ttl %q: want a positive duration such as \"1h\"", b.TTL))
				return
			}
			ttl = d
		}
		scopes := make([]auth.Scope, 0, len(b.Scopes))
		for _, sc := range b.Scopes {
			scopes = append(scopes, auth.Scope(sc))
		}
		tok, c, err := s.Links.Issue(b.Tenant, scopes, ttl)
		var v any
		object := ""
		if err == nil {
			lr := linkReply{Token: tok, ID: c.ID, Tenant: c.Tenant, Scopes: c.Scopes, ExpiresAt: time.Unix(c.Expires, 0).UTC()}
			if s.Console != nil {
				lr.Portal = PortalPath + "?" + url.Values{LinkParam: {tok}}.Encode()
			}
			v = lr
			object = "link/" + c.ID
		}
		s.done(w, r, "link.issue", object, b.Tenant, http.StatusCreated, v, err)
	})
	mux.HandleFunc("DELETE /links/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var err error
		if s.Revocations == nil {
			err = hub.Errorf(hub.FailedPrecondition, "links cannot be revoked without a store (store.sqlite or store.postgres)")
		} else {
			err = s.Revocations.Revoke(r.Context(), id)
		}
		s.done(w, r, "link.revoke", "link/"+id, "", http.StatusNoContent, nil, err)
	})
}
