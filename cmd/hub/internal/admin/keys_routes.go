package admin

import (
	"net/http"
	"strconv"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/hub"
)

// keyBody is POST /keys.
type keyBody struct {
	Tenant *string  `json:"tenant"`
	Name   string   `json:"name"`
	Types  []string `json:"types"`
	// ExpiresAt (RFC 3339) or ExpiresIn (a duration such as "720h") ends the key.
	ExpiresAt string `json:"expires_at"`
	ExpiresIn string `json:"expires_in"`
}

type keyRotateBody struct {
	// Grace is how long the current secret keeps working ("24h"; "0s" ends it at once);
	// empty: the store's rotate_grace.
	Grace string `json:"grace"`
}

// keyReply is a key's metadata and, after a create or a rotation, the key itself: the
// one time it is shown (only its hash is stored).
type keyReply struct {
	*auth.APIKey
	Key string `json:"key,omitempty"`
}

type keyPage struct {
	Keys []*auth.APIKey `json:"keys"`
	Next string         `json:"next,omitempty"`
}

// keyRoutes serve the publishers' API keys. A tenant-scoped caller sees and manages its
// own tenant's keys only (the key store's queries are pinned by KeyRef.ScopedTo and
// ListKeysParams.ScopedTo); another tenant's key is 404.
func (s *Server) keyRoutes(mux *http.ServeMux) {
	ks := func(f func(w http.ResponseWriter, r *http.Request, p auth.Principal)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.Keys == nil {
				writeError(w, http.StatusNotFound, "API keys need a store (store.sqlite or store.postgres)")
				return
			}
			p, _ := auth.FromContext(r.Context())
			f(w, r, p)
		}
	}
	mux.HandleFunc("GET /keys", ks(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q := r.URL.Query()
		lp := auth.ListKeysParams{Tenant: q.Get("tenant"), IncludeRevoked: q.Get("include_revoked") == "true",
			Limit: intParam(r, "limit", DefaultListLimit), After: q.Get("after")}
		keys, next, err := s.Keys.List(r.Context(), lp.ScopedTo(p))
		if keys == nil {
			keys = []*auth.APIKey{}
		}
		reply(w, keyPage{Keys: keys, Next: next}, err)
	}))
	mux.HandleFunc("POST /keys", ks(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		var b keyBody
		if !decodeBody(w, r, &b) {
			return
		}
		tenant, err := ownTenant(r.Context(), "tenant", b.Tenant)
		spec := auth.KeySpec{Name: b.Name, Types: b.Types}
		if tenant != nil {
			spec.Tenant = *tenant
		}
		if err == nil {
			spec.ExpiresAt, err = expiry(b.ExpiresAt, b.ExpiresIn)
		}
		var k *auth.APIKey
		var key string
		if err == nil {
			k, key, err = s.Keys.Create(r.Context(), spec)
		}
		object := ""
		if k != nil {
			object = "key/" + k.ID
		}
		s.done(w, r, "key.create", object, spec.Tenant, http.StatusCreated, keyReply{APIKey: k, Key: key}, err)
	}))
	mux.HandleFunc("GET /keys/{id}", ks(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		k, err := s.Keys.Get(r.Context(), auth.KeyRef{ID: r.PathValue("id")}.ScopedTo(p))
		reply(w, k, err)
	}))
	mux.HandleFunc("POST /keys/{id}/revoke", ks(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		ref := auth.KeyRef{ID: r.PathValue("id")}.ScopedTo(p)
		k, err := s.Keys.Revoke(r.Context(), ref)
		s.done(w, r, "key.revoke", "key/"+ref.ID, keyTenant(k, p), http.StatusOK, k, err)
	}))
	mux.HandleFunc("POST /keys/{id}/rotate", ks(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		var b keyRotateBody
		if !decodeBody(w, r, &b) {
			return
		}
		rp := auth.RotateParams{KeyRef: auth.KeyRef{ID: r.PathValue("id")}.ScopedTo(p)}
		var err error
		if b.Grace != "" {
			if rp.Grace, err = time.ParseDuration(b.Grace); err == nil && rp.Grace == 0 {
				rp.Grace = -1 // "0s": the old secret ends at once
			}
			if err != nil {
				err = hub.Errorf(hub.InvalidArgument, "grace: %v", err)
			}
		}
		var k *auth.APIKey
		var key string
		if err == nil {
			k, key, err = s.Keys.Rotate(r.Context(), rp)
		}
		s.done(w, r, "key.rotate", "key/"+rp.ID, keyTenant(k, p), http.StatusOK, keyReply{APIKey: k, Key: key}, err)
	}))
}

// keyTenant is the tenant an action on a key concerned, for the audit trail.
func keyTenant(k *auth.APIKey, p auth.Principal) string {
	if k != nil {
		return k.Tenant
	}
	return p.Tenant
}

// expiry reads a key's end from an RFC 3339 time or a duration from now.
func expiry(at, in string) (time.Time, error) {
	switch {
	case at != "" && in != "":
		return time.Time{}, hub.Errorf(hub.InvalidArgument, "give expires_at or expires_in, not both")
	case at != "":
		return parseTime(at)
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return time.Time{}, hub.Errorf(hub.InvalidArgument, "expires_in %s: want a positive duration such as \"720h\"", strconv.Quote(in))
		}
		return time.Now().Add(d), nil
	}
	return time.Time{}, nil
}
