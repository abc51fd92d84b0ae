// Package ingress is the hub binary's CloudEvents HTTP ingress: POST /events in binary,
// structured and batch mode, answered 202 only once hub.Publish returned (for an outbox
// route: once the event is durably stored), 400 with an RFC 9457 problem-details body
// naming every invalid field, 409 for an event id accepted before with other content
// (dedupe.go; a repeat of the same event is a 202 listing it as a duplicate), 413 over
// the size limit, 415 for other content types.
package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Defaults of the handler.
const (
	DefaultMaxBodyBytes = 1 << 20 // 1 MiB per request
	DefaultMaxBatch     = 1000    // events per batch request
)

// Media types of the CloudEvents HTTP binding.
const (
	ContentTypeStructured = "application/cloudevents+json"
	ContentTypeBatch      = "application/cloudevents-batch+json"
)

// Validator is the schema registry as the ingress uses it (schema.Registry).
type Validator interface {
	CheckVersion(ev *cloudevent.Event) error
	Validate(ev *cloudevent.Event) error
}

// Publisher is hub.(*Hub).Publish.
type Publisher interface {
	Publish(ctx context.Context, evs ...*cloudevent.Event) error
}

// Handler serves POST requests of CloudEvents.
type Handler struct {
	Publisher    Publisher
	Validator    Validator // nil: only the hub validates
	MaxBodyBytes int64     // default DefaultMaxBodyBytes
	MaxBatch     int       // default DefaultMaxBatch
	Logger       *slog.Logger
	// Parse decodes a request into events (binary, structured, batch); default
	// ParseRequest.
	Parse func(h http.Header, body []byte) ([]*cloudevent.Event, error)
	// Authorize, when set, checks the parsed events of a request against its caller
	// before they are validated and published (Access.Authorize: tenant, types, rate
	// limits). Its error is answered by WriteAccessError (403, 429 with Retry-After).
	Authorize func(ctx context.Context, evs []*cloudevent.Event) error
	// Deduper, when set, accepts each (tenant, event id) once within DedupeWindow
	// (default 24h, R5): a repeat is answered as a duplicate and not published again,
	// other content under the id is a 409 (dedupe.go).
	Deduper      hub.EventDeduper
	DedupeWindow time.Duration
	// RequireULIDIDs refuses ids that are not evt_<ULID> (C1); ids are always at most
	// MaxIDLength characters (ids.go).
	RequireULIDIDs bool
	// Group, when set, publishes the events of concurrent requests together (group
	// commit, group.go); each request is still answered after its group's commit.
	Group *Group
}

// Accepted is the 202 body. IDs lists every event of the request, in order; Duplicates
// those of them accepted earlier within the dedupe window, which were not stored again;
// Accepted counts the others.
type Accepted struct {
	Accepted   int      `json:"accepted"`
	IDs        []string `json:"ids"`
	Duplicates []string `json:"duplicates,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeProblem(w, Problem{Type: ProblemTypeBase + "ingress", Title: "Method not allowed", Status: http.StatusMethodNotAllowed, Detail: "POST CloudEvents to this URL"})
		return
	}
	if p, ok := checkContentType(r.Header); !ok {
		writeProblem(w, p)
		return
	}
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeProblem(w, Problem{Type: ProblemTypeBase + "too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("the body exceeds %d bytes; split the batch", limit)})
			return
		}
		writeProblem(w, Problem{Type: ProblemTypeBase + "ingress", Title: "Cannot read the request body", Status: http.StatusBadRequest, Detail: err.Error()})
		return
	}
	parse := h.Parse
	if parse == nil {
		parse = ParseRequest
	}
	evs, err := parse(r.Header, body)
	if err != nil {
		if errors.Is(err, cloudevent.ErrTooLarge) {
			writeProblem(w, Problem{Type: ProblemTypeBase + "too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge, Detail: err.Error()})
			return
		}
		fes := fieldErrors(err, -1)
		if h.Validator != nil {
			fes = append(fes, dataProblems(r.Header, body, h.Validator)...)
		}
		writeInvalid(w, fes)
		return
	}
	if len(evs) == 0 {
		writeInvalid(w, []FieldError{{Detail: "the batch is empty"}})
		return
	}
	maxBatch := h.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	if len(evs) > maxBatch {
		writeProblem(w, Problem{Type: ProblemTypeBase + "too-large", Title: "Batch too large", Status: http.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("%d events in one batch; the limit is %d", len(evs), maxBatch)})
		return
	}
	if h.Authorize != nil {
		if err := h.Authorize(r.Context(), evs); err != nil {
			WriteAccessError(w, err)
			return
		}
	}
	batch := isBatch(r.Header)
	fes := checkIDs(evs, batch, h.RequireULIDIDs)
	if h.Validator != nil {
		for i, ev := range evs {
			idx := -1
			if batch {
				idx = i
			}
			err := h.Validator.CheckVersion(ev)
			if err == nil {
				err = h.Validator.Validate(ev)
			}
			if err != nil {
				fes = append(fes, fieldErrors(err, idx)...)
			}
		}
	}
	if len(fes) > 0 {
		writeInvalid(w, fes)
		return
	}
	var res published
	if h.Group != nil {
		res, err = h.Group.publish(h, r.Context(), evs, batch)
	} else {
		res, err = h.publish(r.Context(), evs, batch)
	}
	if err != nil {
		h.publishFailed(w, r, err)
		return
	}
	if len(res.conflicts) > 0 {
		writeConflict(w, res.conflicts)
		return
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(Accepted{Accepted: len(evs) - len(res.duplicates), IDs: ids, Duplicates: res.duplicates})
}

func writeInvalid(w http.ResponseWriter, fes []FieldError) {
	names := make([]string, 0, len(fes))
	for _, f := range fes {
		if f.Pointer != "" {
			names = append(names, f.Pointer)
		}
	}
	detail := fmt.Sprintf("%d invalid field(s)", len(fes))
	if len(names) > 0 {
		detail += ": " + strings.Join(names, ", ")
	}
	writeProblem(w, Problem{Type: ProblemTypeBase + "invalid-event", Title: "Invalid CloudEvent", Status: http.StatusBadRequest, Detail: detail, Errors: fes})
}

// publishFailed maps the hub's error code to a status: the client may retry 503 and 429,
// never 400.
func (h *Handler) publishFailed(w http.ResponseWriter, r *http.Request, err error) {
	code := hub.Code(err)
	if code == hub.InvalidArgument {
		writeInvalid(w, fieldErrors(err, -1))
		return
	}
	if h.Logger != nil {
		h.Logger.Warn("ingress publish failed", "error", err, "code", code.String())
	}
	p := Problem{Type: ProblemTypeBase + "unavailable", Title: "The hub could not accept the event", Detail: err.Error()}
	switch code {
	case hub.Unavailable, hub.FailedPrecondition, hub.DeadlineExceeded, hub.Canceled:
		p.Status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case hub.ResourceExhausted:
		p.Status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
	default:
		p.Status = http.StatusInternalServerError
	}
	writeProblem(w, p)
}

// checkContentType accepts the structured and batch media types (JSON format only) and
// binary mode (any content type, recognised by ce- headers).
func checkContentType(h http.Header) (Problem, bool) {
	mt := mediaType(h.Get("Content-Type"))
	switch {
	case mt == ContentTypeStructured || mt == ContentTypeBatch:
		return Problem{}, true
	case strings.HasPrefix(mt, "application/cloudevents"):
		return unsupported(mt, "only the JSON event format is supported"), false
	case hasCEHeaders(h):
		return Problem{}, true
	}
	return unsupported(mt, "send application/cloudevents+json (structured), application/cloudevents-batch+json (batch), or binary mode with ce-specversion, ce-id, ce-source, ce-type headers"), false
}

func unsupported(mt, detail string) Problem {
	if mt == "" {
		mt = "(none)"
	}
	return Problem{Type: ProblemTypeBase + "unsupported-media-type", Title: "Unsupported content type " + mt, Status: http.StatusUnsupportedMediaType, Detail: detail}
}

func hasCEHeaders(h http.Header) bool {
	for k := range h {
		if len(k) > 3 && strings.EqualFold(k[:3], "ce-") {
			return true
		}
	}
	return false
}

func isBatch(h http.Header) bool { return mediaType(h.Get("Content-Type")) == ContentTypeBatch }

func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}
