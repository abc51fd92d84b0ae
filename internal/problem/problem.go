// Package problem writes RFC 9457 problem documents, the error body every listener of
// the hub answers with (ingress, admin API, and the request guards of auth that sit in
// front of both). It maps hub.ErrorCode to HTTP status in one table so a refusal reads
// the same whichever listener gave it.
package problem

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/koder/eventhub/hub"
)

// TypeBase prefixes the "type" URIs of the security problems; each names the section of
// docs/security.md that explains the refusal.
const TypeBase = "https://github.com/koder/eventhub/blob/main/docs/security.md#"

// ContentType is the media type of a problem document (RFC 9457 section 3).
const ContentType = "application/problem+json"

// Problem is an RFC 9457 problem-details body. Field names the request part at fault
// (a header, a CloudEvents attribute such as "tenantid") when there is one; it is an
// extension member, as the RFC allows.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Field  string `json:"field,omitempty"`
}

// New builds a problem of the given status. anchor is a docs/security.md section ("" for
// about:blank, whose title is the status text).
func New(status int, anchor, detail string) Problem {
	typ := "about:blank"
	if anchor != "" {
		typ = TypeBase + anchor
	}
	return Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail}
}

// Write sends p. It sets nosniff so a browser never renders the body as anything else.
func Write(w http.ResponseWriter, p Problem) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// Status maps a hub error code to the HTTP status a listener answers with.
func Status(code hub.ErrorCode) int {
	switch code {
	case hub.OK:
		return http.StatusOK
	case hub.InvalidArgument:
		return http.StatusBadRequest
	case hub.Unauthenticated:
		return http.StatusUnauthorized
	case hub.PermissionDenied:
		return http.StatusForbidden
	case hub.NotFound:
		return http.StatusNotFound
	case hub.AlreadyExists:
		return http.StatusConflict
	case hub.FailedPrecondition:
		return http.StatusConflict
	case hub.ResourceExhausted:
		return http.StatusTooManyRequests
	case hub.Unavailable:
		return http.StatusServiceUnavailable
	case hub.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case hub.Canceled:
		return 499 // client closed request: nobody reads it, but logs do
	}
	return http.StatusInternalServerError
}

// Fielder is implemented by errors that name the request part at fault.
type Fielder interface{ ProblemField() string }

// Anchorer is implemented by errors that name their docs/security.md section.
type Anchorer interface{ ProblemAnchor() string }

// Statuser is implemented by errors whose HTTP status is finer than their hub code
// (415 Unsupported Media Type is InvalidArgument).
type Statuser interface{ ProblemStatus() int }

// FromError builds the problem for err: the status from its hub code (or its
// ProblemStatus), the message as detail, and the field and anchor when err carries
// them. A server-side error (5xx) without an anchor gets a generic detail: its message
// may name a database host or a driver error, which is no business of the caller.
func FromError(err error) Problem {
	status := Status(hub.Code(err))
	var st Statuser
	if errors.As(err, &st) {
		status = st.ProblemStatus()
	}
	var anchor string
	var a Anchorer
	if errors.As(err, &a) {
		anchor = a.ProblemAnchor()
	}
	detail := err.Error()
	if status >= 500 && anchor == "" {
		detail = "internal error"
		if status == http.StatusServiceUnavailable {
			detail = "temporarily unavailable; retry later"
		}
	}
	p := New(status, anchor, detail)
	var f Fielder
	if errors.As(err, &f) {
		p.Field = f.ProblemField()
	}
	return p
}

// WriteError writes the problem for err (see FromError).
func WriteError(w http.ResponseWriter, err error) { Write(w, FromError(err)) }
