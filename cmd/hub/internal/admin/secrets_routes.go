package admin

import (
	"net/http"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/problem"
	"github.com/koder/eventhub/secrets"
	"github.com/koder/eventhub/transports/webhook"
)

// secretsStatus is GET /secrets: the key ring's key ids (the first encrypts) and how
// the webhook endpoints' secrets are stored.
type secretsStatus struct {
	Keys      []string               `json:"keys"`
	Endpoints *webhook.SecretsStatus `json:"endpoints,omitempty"`
}

type reencryptBody struct {
	// After resumes an interrupted run: the "last" it answered.
	After     string `json:"after"`
	BatchSize int    `json:"batch_size"`
}

type reencryptReply struct {
	Scanned int    `json:"scanned"`
	Updated int    `json:"updated"`
	Changed int    `json:"changed"`
	Last    string `json:"last"`
}

// reencryptProblem is the problem of an interrupted run, with where to resume.
type reencryptProblem struct {
	problem.Problem
	Last string `json:"last"`
}

// secretsRoutes are operator-only (access.go): the state of secrets at rest and the
// re-encryption that upgrades plaintext rows and finishes a key rotation.
func (s *Server) secretsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /secrets", func(w http.ResponseWriter, r *http.Request) {
		st := secretsStatus{Keys: []string{}}
		if s.Keyring != nil {
			st.Keys = s.Keyring.IDs()
		}
		if t := s.webhookTransport(); t != nil {
			es, err := t.SecretsStatus(r.Context())
			if err != nil {
				writeErr(w, err)
				return
			}
			st.Endpoints = &es
		}
		writeJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("POST /secrets/reencrypt", func(w http.ResponseWriter, r *http.Request) {
		var b reencryptBody
		if !decodeBody(w, r, &b) {
			return
		}
		t := s.webhookTransport()
		if t == nil {
			s.done(w, r, "secrets.reencrypt", "", "", 0, nil, hub.Errorf(hub.NotFound, "no webhook transport is configured: no secret to re-encrypt"))
			return
		}
		res, err := t.ReencryptSecrets(r.Context(), secrets.ReencryptOptions{After: b.After, BatchSize: b.BatchSize})
		out := reencryptReply{Scanned: res.Scanned, Updated: res.Updated, Changed: res.Changed, Last: res.Last}
		if aerr := s.audit().Action(r.Context(), "secrets.reencrypt", "webhook_endpoints", "", err); err == nil && aerr != nil {
			s.logger().Warn("admin: audit row not stored", "action", "secrets.reencrypt", "error", aerr)
		}
		if err != nil {
			p := problem.FromError(err)
			p.Detail = err.Error() + " (resume with after=" + res.Last + ")"
			writeJSON(w, p.Status, reencryptProblem{Problem: p, Last: res.Last})
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// webhookTransport is the webhook transport, or nil.
func (s *Server) webhookTransport() *webhook.Transport {
	for _, t := range s.Transports {
		if p, ok := t.Module.(interface{ Webhook() *webhook.Transport }); ok && p.Webhook() != nil {
			return p.Webhook()
		}
	}
	return nil
}
