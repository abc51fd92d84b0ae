package streamtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// Peers: what a consumer written by someone else, from the seed text alone, accepts.
// These checks deliberately use nothing of the hub (no decoder, no field constants):
// they are the seeds read literally, so an entry the hub writes and they refuse is one
// a correct peer would dead-letter.

// Seed000Problems is a seed 000 consumer's acceptance test of one entry (R2): each of
// the seven fields present and non-empty, event_id "evt_" + a ULID, occurred_at ISO
// 8601 in UTC, actor one of system, user:<id>, admin:<id>, data JSON. It returns what
// it refuses, nothing for an entry it would handle.
func Seed000Problems(values map[string]string) []string {
	var out []string
	for _, f := range []string{"type", "event_id", "occurred_at", "tenant_id", "subject_id", "actor", "data"} {
		v, ok := values[f]
		switch {
		case !ok:
			out = append(out, f+": missing")
		case v == "":
			out = append(out, f+": empty")
		}
	}
	if id := values["event_id"]; id != "" && !seed000ID.MatchString(id) {
		out = append(out, "event_id: not evt_<ULID>: "+id)
	}
	if at := values["occurred_at"]; at != "" {
		if t, err := time.Parse(time.RFC3339Nano, at); err != nil || !strings.HasSuffix(at, "Z") || t.Location() != time.UTC {
			out = append(out, "occurred_at: not ISO 8601 UTC: "+at)
		}
	}
	if a := values["actor"]; a != "" && !seed000Actor.MatchString(a) {
		out = append(out, "actor: not system, user:<id> or admin:<id>: "+a)
	}
	if d := values["data"]; d != "" && !json.Valid([]byte(d)) {
		out = append(out, "data: not JSON")
	}
	return out
}

var (
	seed000ID    = regexp.MustCompile(`^evt_[0-9A-HJKMNP-TV-Z]{26}$`)
	seed000Actor = regexp.MustCompile(`^(system|user:.+|admin:.+)$`)
	semver       = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)
)

// Seed001Problems is a seed 001 consumer's acceptance test of one entry (E1): the eight
// envelope fields present and non-empty, timestamp ISO 8601 UTC, version semver with a
// MAJOR it knows (knownMajor: "reject unknown MAJOR versions"), data JSON and metadata
// a JSON object.
func Seed001Problems(values map[string]string, knownMajor int) []string {
	var out []string
	for _, f := range []string{"event_id", "correlation_id", "event_type", "version", "timestamp", "source", "data", "metadata"} {
		v, ok := values[f]
		switch {
		case !ok:
			out = append(out, f+": missing")
		case v == "":
			out = append(out, f+": empty")
		}
	}
	if ts := values["timestamp"]; ts != "" {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
			out = append(out, "timestamp: not ISO 8601 UTC: "+ts)
		}
	}
	if v := values["version"]; v != "" {
		m := semver.FindStringSubmatch(v)
		if m == nil {
			out = append(out, "version: not semver: "+v)
		} else if major, _ := strconv.Atoi(m[1]); major != knownMajor {
			out = append(out, "version: unknown MAJOR "+m[1])
		}
	}
	if d := values["data"]; d != "" && !json.Valid([]byte(d)) {
		out = append(out, "data: not JSON")
	}
	var md map[string]any
	if m := values["metadata"]; m != "" && json.Unmarshal([]byte(m), &md) != nil {
		out = append(out, "metadata: not a JSON object")
	}
	return out
}

// RandomEvents returns n valid events drawn from rng, each of typ or a type the caller
// derives (typeOf(i)), leaving out at random what CloudEvents makes optional and R2
// does not: actor, subject, time and data. The rest varies too: JSON, text and binary
// data, typed extensions, correlation ids, dataversions.
func RandomEvents(rng *rand.Rand, n int, typeOf func(i int) string) []*cloudevent.Event {
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		ev := cloudevent.New("/streamtest/random", typeOf(i)).SetTenantID(fmt.Sprintf("tenant-%d", rng.IntN(3)))
		ev.DataContentType = ""
		if rng.IntN(2) == 0 {
			ev.Time = time.Time{}
		}
		if rng.IntN(2) == 0 {
			ev.Subject = fmt.Sprintf("user-%d", rng.IntN(1000))
		}
		switch rng.IntN(3) {
		case 0:
			ev.SetActor("system")
		case 1:
			ev.SetActor(fmt.Sprintf("user:%d", rng.IntN(1000)))
		}
		switch rng.IntN(5) {
		case 0: // no data
		case 1:
			ev.DataContentType, ev.Data = "text/plain", []byte("héllo ✓ "+strconv.Itoa(i))
		case 2:
			ev.DataContentType, ev.Data = "application/octet-stream", []byte{0, 0xff, byte(i), 0xc3, 0x28}
		case 3:
			ev.DataContentType, ev.Data = cloudevent.ContentTypeJSON, []byte("{}")
		default:
			ev.DataContentType, ev.Data = cloudevent.ContentTypeJSON, fmt.Appendf(nil, `{"user_id":"u%d","n":%d}`, i, rng.IntN(100))
		}
		if rng.IntN(2) == 0 {
			ev.SetCorrelationID(fmt.Sprintf("req_%d", rng.IntN(100)))
		}
		if rng.IntN(2) == 0 {
			ev.SetDataVersion("1." + strconv.Itoa(rng.IntN(3)) + ".0")
		}
		if rng.IntN(3) == 0 {
			ev.SetExtension("attempt", int32(rng.IntN(5)))
			ev.SetExtension("flag", rng.IntN(2) == 0)
		}
		evs[i] = ev
	}
	return evs
}
