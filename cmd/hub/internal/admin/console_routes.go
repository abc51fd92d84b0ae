package admin

import (
	"net/http"
	"net/url"

	"github.com/koder/eventhub/transports/webhook"
)

// breakerReply is GET /endpoints/{id}/breaker.
type breakerReply struct {
	Breaker webhook.BreakerStatus       `json:"breaker"`
	History []webhook.BreakerTransition `json:"history"`
}

// consoleRoutes are the API side of what the web console shows: keyset pages of
// deliveries, resending everything a filter matches, a test event to one endpoint,
// an endpoint's breaker with its history. Each is scoped like the other webhook routes.
func (s *Server) consoleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /deliveries/page", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		q, err := ParseDeliveryQuery(r.Context(), r.URL.Query())
		if err != nil {
			writeErr(w, err)
			return
		}
		p, err := t.DeliveryPage(r.Context(), q)
		reply(w, p, err)
	}))
	mux.HandleFunc("POST /deliveries/resend-matching", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		if !decodeBody(w, r, &b) {
			return
		}
		v := url.Values{}
		for k, x := range b {
			v.Set(k, x)
		}
		q, err := ParseDeliveryQuery(r.Context(), v)
		n := 0
		if err == nil {
			n, err = t.ResendMatching(r.Context(), q)
		}
		s.done(w, r, "delivery.resend", "deliveries/matching", scopedTenant(r.Context()), http.StatusOK, resentReply{Resent: n}, err)
	}))
	mux.HandleFunc("POST /endpoints/{id}/test", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		cur, err := s.ownedEndpoint(r, t)
		var d *webhook.Delivery
		if err == nil {
			d, err = t.SendTest(r.Context(), id)
		}
		s.done(w, r, "endpoint.test", "endpoint/"+id, tenantOf(cur), http.StatusCreated, d, err)
	}))
	mux.HandleFunc("GET /endpoints/{id}/breaker", s.wh(func(t *webhook.Transport, w http.ResponseWriter, r *http.Request) {
		if _, err := s.ownedEndpoint(r, t); err != nil {
			writeErr(w, err)
			return
		}
		id := r.PathValue("id")
		b, err := t.Breaker(r.Context(), id)
		if err != nil {
			writeErr(w, err)
			return
		}
		h, err := t.BreakerHistory(r.Context(), id, intParam(r, "limit", 0))
		reply(w, breakerReply{Breaker: b, History: h}, err)
	}))
}
