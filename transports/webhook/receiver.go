package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// ReceiverConfig configures NewReceiver.
type ReceiverConfig struct {
	// Secrets are the endpoint's signing secrets as shown at registration (whsec_...);
	// during a rotation list both. At least one.
	Secrets []string `yaml:"secrets"`
	// Tolerance is the allowed clock difference, both ways. Default DefaultTolerance.
	Tolerance time.Duration `yaml:"tolerance"`
	// MaxBodyBytes limits a request body. Default cloudevent.DefaultMaxBodyBytes (1 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// Now is the clock; default time.Now. Tests pin it.
	Now func() time.Time `yaml:"-"`
	// Logger receives refused requests. Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

// Receiver is the receiving side of a webhook: an http.Handler that verifies the
// signature over the raw body (H2), parses the CloudEvent(s) (C1: validated on parse)
// and calls the handler for each, with a context prepared by hub.ContextWithEvent (the
// event, its tenant and correlation id, the sender's trace as parent), so events the
// handler publishes through a hub keep the request chain (E4).
//
// Responses: 204 when every event was handled; 401 for a missing, expired or
// mismatched signature; 400 for a body that is not a valid CloudEvent; 413 for a body
// over MaxBodyBytes; 405 for a method other than POST; 500 when the handler fails, so
// the sender retries (the handler must therefore be idempotent: use the event id, also
// in the Webhook-Id header).
type Receiver struct {
	cfg     ReceiverConfig
	secrets [][]byte
	handle  func(context.Context, *cloudevent.Event) error
}

// NewReceiver returns a Receiver calling handle for each verified event.
func NewReceiver(cfg ReceiverConfig, handle func(context.Context, *cloudevent.Event) error) (*Receiver, error) {
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("webhook: ReceiverConfig.Secrets: at least one secret")
	}
	if handle == nil {
		return nil, errors.New("webhook: NewReceiver: nil handler")
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = cloudevent.DefaultMaxBodyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Receiver{cfg: cfg, handle: handle}
	for _, s := range cfg.Secrets {
		r.secrets = append(r.secrets, []byte(s))
	}
	return r, nil
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	if err := Verify(req.Header.Get(SignatureHeader), body, r.secrets, r.cfg.Tolerance, r.cfg.Now()); err != nil {
		r.cfg.Logger.Warn("webhook: refused request", "err", err, "id", req.Header.Get(IDHeader), "remote", req.RemoteAddr)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	evs, err := cloudevent.FromHTTP(req.Header, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, ev := range evs {
		// E4, E7, R8: the handler's context carries the event (its tenant, correlation
		// id and the sender's trace), so what it publishes continues the chain.
		if err := r.handle(hub.ContextWithEvent(req.Context(), ev), ev); err != nil {
			r.cfg.Logger.Warn("webhook: handler failed", "err", err, "id", ev.ID, "type", ev.Type)
			http.Error(w, "handler failed", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

var _ http.Handler = (*Receiver)(nil)
