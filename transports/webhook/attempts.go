package webhook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
)

// Attempts: each delivery attempt's status code, latency and the first bytes of the
// response, kept with the delivery so an operator (or the tenant whose endpoint it is)
// sees what the receiver answered each time, not only the last time. They live in the
// job's metadata under one key, written by the same River update that finishes the
// attempt, so recording them costs no extra write; the list keeps the newest
// maxAttemptsKept and each excerpt is cut at attemptExcerpt bytes, which bounds the row
// however often a delivery is resent.

// metaAttempts is the metadata key of the attempt list.
const metaAttempts = "attempts"

// maxAttemptsKept bounds the attempts kept per delivery (the schedule's six, and
// manual resends after).
const maxAttemptsKept = 25

// attemptExcerpt is how many bytes of each attempt's response body are kept; the
// last failed attempt's excerpt (Delivery.LastResponse) keeps Config.ResponseExcerpt.
const attemptExcerpt = 256

// Attempt is one delivery attempt.
type Attempt struct {
	// Attempt is its number (1 for the first; a resend continues the count).
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	// Status is the HTTP status; 0 when no response came (refused, timed out).
	Status int `json:"status,omitempty"`
	// LatencyMS is the request's duration, connect to response headers, in ms.
	LatencyMS float64 `json:"latency_ms"`
	// Response is the first bytes of the response body.
	Response string `json:"response,omitempty"`
	// Error is why the attempt failed ("" when it delivered).
	Error string `json:"error,omitempty"`
}

// Delivered reports whether the attempt got a 2xx.
func (a Attempt) Delivered() bool { return a.Error == "" && a.Status/100 == 2 }

// recordAttempt appends r to the job's attempt list (River merges the metadata into the
// job row when Work returns).
func (t *Transport) recordAttempt(ctx context.Context, job *river.Job[deliveryArgs], r result, at time.Time) {
	prev := attemptsFromMeta(job.Metadata)
	a := Attempt{Attempt: job.Attempt, At: at.UTC(), Status: r.status,
		LatencyMS: float64(r.elapsed.Microseconds()) / 1000, Response: cut(r.excerpt, attemptExcerpt)}
	if r.err != nil {
		a.Error = r.err.Error()
	}
	list := append(prev, a)
	if len(list) > maxAttemptsKept {
		list = list[len(list)-maxAttemptsKept:]
	}
	setMeta(ctx, metaAttempts, list)
}

// attemptsFromMeta reads the attempt list of a job's metadata.
func attemptsFromMeta(meta []byte) []Attempt {
	var m struct {
		Attempts []Attempt `json:"attempts"`
	}
	_ = json.Unmarshal(meta, &m) // an absent key or old row: no list
	return m.Attempts
}

// withAttempts fills d.Attempts, from the recorded list or, for deliveries made before
// it was recorded, from the errors River kept (no status, latency or response then).
func (d *Delivery) withAttempts(meta []byte) {
	d.Attempts = attemptsFromMeta(meta)
	if len(d.Attempts) > 0 {
		return
	}
	for _, e := range d.Errors {
		d.Attempts = append(d.Attempts, Attempt{Attempt: e.Attempt, At: e.At, Error: e.Error})
	}
}

// cut returns at most n bytes of s, not splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
