package engine

import (
	"math"
	"strconv"
	"strings"
)

// ID is a stream entry id, "<ms>-<seq>". Redis uses two unsigned 64-bit halves; the SQL
// tables store signed BIGINTs, so both halves are limited to 2^63-1 here (the one
// documented range deviation: a real clock never gets near it).
type ID struct{ Ms, Seq int64 }

// MaxID is the largest id the engine stores ("+" in a range).
var MaxID = ID{math.MaxInt64, math.MaxInt64}

func (id ID) String() string {
	var b [41]byte // two int64s and the dash: one allocation per id (every reply has many)
	return string(id.Append(b[:0]))
}

// Append appends id's "<ms>-<seq>" form to b.
func (id ID) Append(b []byte) []byte {
	b = strconv.AppendInt(b, id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendInt(b, id.Seq, 10)
}

// Less reports id < o.
func (id ID) Less(o ID) bool { return id.Ms < o.Ms || (id.Ms == o.Ms && id.Seq < o.Seq) }

// Cmp returns -1, 0 or 1.
func (id ID) Cmp(o ID) int {
	switch {
	case id.Less(o):
		return -1
	case o.Less(id):
		return 1
	}
	return 0
}

// IsZero reports id == 0-0.
func (id ID) IsZero() bool { return id.Ms == 0 && id.Seq == 0 }

// Next returns the smallest id greater than id (ok false at MaxID).
func (id ID) Next() (ID, bool) {
	if id.Seq < math.MaxInt64 {
		return ID{id.Ms, id.Seq + 1}, true
	}
	if id.Ms < math.MaxInt64 {
		return ID{id.Ms + 1, 0}, true
	}
	return id, false
}

// Prev returns the largest id smaller than id (ok false at 0-0).
func (id ID) Prev() (ID, bool) {
	if id.Seq > 0 {
		return ID{id.Ms, id.Seq - 1}, true
	}
	if id.Ms > 0 {
		return ID{id.Ms - 1, math.MaxInt64}, true
	}
	return id, false
}

// ParseID parses a complete or incomplete id ("5" means 5-<missingSeq>), as Redis's
// streamParseID does. It returns errInvalidID on anything else.
func ParseID(s string, missingSeq int64) (ID, error) {
	ms, seq, found := strings.Cut(s, "-")
	m, err := parseU63(ms)
	if err != nil {
		return ID{}, errInvalidID
	}
	if !found {
		return ID{m, missingSeq}, nil
	}
	q, err := parseU63(seq)
	if err != nil {
		return ID{}, errInvalidID
	}
	return ID{m, q}, nil
}

// ParseStrictID accepts only "<ms>-<seq>" or "<ms>" (seq 0), no "-"/"+"; used for
// XACK, XCLAIM, XPENDING entries, group ids.
func ParseStrictID(s string) (ID, error) { return ParseID(s, 0) }

func parseU63(s string) (int64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, errInvalidID
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseRangeStart parses an XRANGE/XPENDING start: "-", "(id" or an (incomplete) id.
func parseRangeStart(s string) (ID, bool, error) {
	if s == "-" {
		return ID{}, true, nil
	}
	if s == "+" {
		return MaxID, true, nil
	}
	ex := strings.HasPrefix(s, "(")
	id, err := ParseID(strings.TrimPrefix(s, "("), 0)
	if err != nil {
		return id, false, err
	}
	if ex {
		n, ok := id.Next()
		if !ok {
			return id, false, errInvalidStartExclusive
		}
		return n, true, nil
	}
	return id, true, nil
}

// parseRangeEnd parses an XRANGE/XPENDING end: "+", "(id" or an (incomplete) id.
func parseRangeEnd(s string) (ID, bool, error) {
	if s == "+" {
		return MaxID, true, nil
	}
	if s == "-" {
		return ID{}, true, nil
	}
	ex := strings.HasPrefix(s, "(")
	id, err := ParseID(strings.TrimPrefix(s, "("), math.MaxInt64)
	if err != nil {
		return id, false, err
	}
	if ex {
		p, ok := id.Prev()
		if !ok {
			return id, false, errInvalidEndExclusive
		}
		return p, true, nil
	}
	return id, true, nil
}
