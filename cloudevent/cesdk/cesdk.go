// Package cesdk converts between the hub's cloudevent.Event and the CloudEvents Go SDK's
// event.Event (github.com/cloudevents/sdk-go/v2), losslessly in both directions.
//
// It is a package of its own so that importing cloudevent does not pull in the SDK and
// its dependencies: only programs that talk to SDK code pay for it.
//
// The conversion carries every attribute exactly, every extension with its CloudEvents
// type (String string, Boolean bool, Integer int32, Binary []byte, Timestamp
// types.Timestamp, URI types.URI, URI-reference types.URIRef) and the data bytes as
// they are. It fills the SDK's struct fields directly instead of calling the SDK's
// setters, which trim spaces from id, type and subject.
//
// One SDK habit needs care: types.URI and types.URIRef hold a parsed net/url.URL and
// print it back with url.URL.String, which re-escapes non-ASCII characters and
// lowercases the scheme ("ü/ß" becomes "%C3%BC/%C3%9F"). ToSDK parses a URI value when
// net/url prints it back unchanged (the common case: SDK code can use the URL's parts)
// and otherwise keeps the text verbatim in url.URL.Opaque, which String prints as is, so
// FromSDK (and the SDK's own encoders) give back exactly the original text.
package cesdk

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	ce "github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/koder/eventhub/cloudevent"
)

// ToSDK returns the SDK event carrying ev. ev is validated first: the SDK does not
// check extension names or value types the way the hub does (see docs/cloudevent.md),
// so an invalid event is refused here rather than passed on. The data is ev.Data
// itself, not a copy.
func ToSDK(ev *cloudevent.Event) (ce.Event, error) {
	if ev == nil {
		return ce.Event{}, invalid("", "nil event")
	}
	if err := ev.Validate(); err != nil {
		return ce.Event{}, err
	}
	ctx := &ce.EventContextV1{
		ID:     ev.ID,
		Source: types.URIRef{URL: textURL(ev.Source)},
		Type:   ev.Type,
	}
	if ev.DataContentType != "" {
		ct := ev.DataContentType
		ctx.DataContentType = &ct
	}
	if ev.DataSchema != "" {
		ctx.DataSchema = &types.URI{URL: textURL(ev.DataSchema)}
	}
	if ev.Subject != "" {
		s := ev.Subject
		ctx.Subject = &s
	}
	if !ev.Time.IsZero() {
		ctx.Time = &types.Timestamp{Time: ev.Time.UTC()}
	}
	if len(ev.Extensions) > 0 {
		ctx.Extensions = make(map[string]any, len(ev.Extensions))
		for name, v := range ev.Extensions {
			sv, err := toSDKValue(v)
			if err != nil {
				return ce.Event{}, invalid(name, err.Error())
			}
			ctx.Extensions[name] = sv
		}
	}
	out := ce.Event{Context: ctx}
	if len(ev.Data) > 0 {
		out.DataEncoded = ev.Data
		// Only what matters for the SDK's own structured encoder: the same choice as the
		// hub's JSON codec (JSON verbatim, valid text as a string, the rest base64).
		out.DataBase64 = !cloudevent.IsJSON(ev.DataContentType) && !(isText(ev.DataContentType) && utf8.Valid(ev.Data))
	}
	return out, nil
}

// FromSDK returns the hub event carried by e and validates it (C1: the tenantid
// extension is required). Only CloudEvents 1.0 is accepted. Data is e.DataEncoded
// itself, not a copy. Extension values of Go types outside the CloudEvents type system
// (which the SDK can hold when code bypasses its setters) are reported like any other
// problem, in a *cloudevent.ValidationError (hub code InvalidArgument).
func FromSDK(e ce.Event) (*cloudevent.Event, error) {
	if e.Context == nil {
		return nil, invalid("", "SDK event without a context")
	}
	ctx, ok := e.Context.(*ce.EventContextV1)
	if !ok || ctx == nil {
		return nil, invalid("specversion", fmt.Sprintf("%q, want %s", e.SpecVersion(), cloudevent.SpecVersion))
	}
	ev := &cloudevent.Event{
		ID:          ctx.ID,
		Source:      ctx.Source.String(),
		SpecVersion: cloudevent.SpecVersion,
		Type:        ctx.Type,
	}
	if ctx.DataContentType != nil {
		ev.DataContentType = *ctx.DataContentType
	}
	if ctx.DataSchema != nil {
		ev.DataSchema = ctx.DataSchema.String()
	}
	if ctx.Subject != nil {
		ev.Subject = *ctx.Subject
	}
	if ctx.Time != nil && !ctx.Time.IsZero() {
		ev.Time = ctx.Time.UTC()
	}
	var bad []cloudevent.Problem
	if len(ctx.Extensions) > 0 {
		ev.Extensions = make(map[string]any, len(ctx.Extensions))
		for name, v := range ctx.Extensions {
			hv, err := fromSDKValue(v)
			if err != nil {
				bad = append(bad, cloudevent.Problem{Field: name, Message: err.Error()})
				continue
			}
			ev.Extensions[name] = hv
		}
	}
	if len(bad) > 0 {
		return nil, &cloudevent.ValidationError{Problems: bad}
	}
	if len(e.DataEncoded) > 0 {
		ev.Data = e.DataEncoded
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	return ev, nil
}

func toSDKValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool, int32, []byte:
		return x, nil
	case time.Time:
		return types.Timestamp{Time: x.UTC()}, nil
	case cloudevent.URI:
		return types.URI{URL: textURL(string(x))}, nil
	case cloudevent.URIRef:
		return types.URIRef{URL: textURL(string(x))}, nil
	}
	return nil, fmt.Errorf("unsupported type %T", v)
}

func fromSDKValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool, int32, []byte:
		return x, nil
	case types.Timestamp:
		return x.UTC(), nil
	case *types.Timestamp:
		if x != nil {
			return x.UTC(), nil
		}
	case types.URI:
		return cloudevent.URI(x.String()), nil
	case *types.URI:
		if x != nil {
			return cloudevent.URI(x.String()), nil
		}
	case types.URIRef:
		return cloudevent.URIRef(x.String()), nil
	case *types.URIRef:
		if x != nil {
			return cloudevent.URIRef(x.String()), nil
		}
	case time.Time:
		return x.UTC(), nil
	}
	return nil, fmt.Errorf("%T is not a CloudEvents type", v)
}

// invalid is a one-problem *cloudevent.ValidationError: hub.Code classifies it as
// InvalidArgument, like every other malformed event.
func invalid(field, msg string) error {
	return &cloudevent.ValidationError{Problems: []cloudevent.Problem{{Field: field, Message: msg}}}
}

// textURL returns a url.URL whose String() is exactly s: the parsed URL when net/url
// prints it back unchanged, otherwise s kept verbatim as the opaque part (see the
// package documentation).
func textURL(s string) url.URL {
	u, err := url.Parse(s)
	if err == nil && u.String() == s {
		return *u
	}
	// Keep the scheme apart (as written) so IsAbs still holds for an absolute URI; the
	// SDK's validation of dataschema and URI extensions checks it.
	if err == nil && u.Scheme != "" && len(s) > len(u.Scheme) && s[len(u.Scheme)] == ':' {
		return url.URL{Scheme: s[:len(u.Scheme)], Opaque: s[len(u.Scheme)+1:]}
	}
	return url.URL{Opaque: s}
}

// isText mirrors the hub's JSON codec: text types whose valid UTF-8 data is written as a
// JSON string rather than base64.
func isText(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}
