package webhook

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/koder/eventhub/hub"
)

// result is what one attempt produced.
type result struct {
	status     int
	excerpt    string
	err        error // nil when delivered
	code       hub.ErrorCode
	outcome    outcome
	retryAfter time.Duration
	elapsed    time.Duration
}

// drainLimit is how much of a response body is read to let the connection be reused;
// past it the connection is closed instead (a receiver streaming megabytes of error
// page should not hold a worker).
const drainLimit = 64 << 10

// buildRequest builds the POST from the request encoded at fan-out and signs the exact
// body bytes (H2) with every active secret of ep at now, in the endpoint's scheme. The
// endpoint's static headers go in first, so the binding's and the signature's headers
// are never shadowed (the reserved names are refused at registration anyway); a static
// User-Agent replaces the transport's.
func (t *Transport) buildRequest(ctx context.Context, ep *Endpoint, args *deliveryArgs, deliveryID int64, now time.Time) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(args.Body))
	if err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	ep.Controls.applyHeaders(req.Header) // first: the transport's own headers win
	for k, v := range args.Header {
		req.Header[k] = []string{v}
	}
	req.Header.Set(IDHeader, args.EventID)
	ep.Controls.Signature.sign(req.Header, args.EventID, now, args.Body, ep.activeSecrets(now), t.cfg.StandardWebhooks)
	req.Header.Set(DeliveryHeader, strconv.FormatInt(deliveryID, 10))
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", t.cfg.UserAgent)
	}
	return req, nil
}

// attempt sends one delivery request and classifies the outcome.
func (t *Transport) attempt(ctx context.Context, ep *Endpoint, args *deliveryArgs, deliveryID int64) result {
	if _, err := checkURL(ep.URL); err != nil { // the static rules again at send
		return result{err: err, code: hub.PermissionDenied, outcome: blocked}
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.AttemptTimeout)
	defer cancel()
	now := time.Now()
	req, err := t.buildRequest(ctx, ep, args, deliveryID, now)
	if err != nil {
		return result{err: err, code: hub.Code(err), outcome: invalid}
	}
	client, err := t.client.forEndpoint(ep)
	if err != nil {
		return result{err: err, code: hub.InvalidArgument, outcome: invalid}
	}
	resp, err := client.Do(req)
	elapsed := time.Since(now)
	if err != nil {
		code, out := classifyErr(err)
		t.m.duration.WithLabelValues("error").Observe(elapsed.Seconds())
		return result{err: hub.Errorf(code, "webhook: POST %s: %w", ep.URL, err), code: code, outcome: out, elapsed: elapsed}
	}
	defer resp.Body.Close()
	t.m.duration.WithLabelValues(strconv.Itoa(resp.StatusCode/100) + "xx").Observe(elapsed.Seconds())
	cls := classifyStatus(resp.StatusCode)
	r := result{status: resp.StatusCode, code: cls.code, outcome: cls.outcome, elapsed: elapsed}
	// The excerpt of every response is read (attempts.go keeps the first bytes of each);
	// only a failed one's is kept whole as the delivery's LastResponse.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, int64(t.cfg.ResponseExcerpt)))
	r.excerpt = string(b)
	if cls.outcome != delivered {
		r.err = hub.Errorf(cls.code, "webhook: POST %s: status %d", ep.URL, resp.StatusCode)
		if cls.retryAfter {
			r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	return r
}
