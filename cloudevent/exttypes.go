package cloudevent

import (
	"slices"
	"strconv"
	"strings"
)

// typeList encodes the types of the non-string extensions as "name:kind,..." sorted by
// name, "" when every extension is a string. Flat codecs (R2, Watermill, HTTP) carry it
// beside the canonical string values so that typed values survive the trip.
func typeList(exts map[string]any) string {
	var names []string
	for name, v := range exts {
		if _, ok := v.(string); !ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(KindOf(exts[name]).String())
	}
	return b.String()
}

// applyTypeList converts the string extensions named in list to their kinds, adding a
// problem (under field) for each entry that does not parse or names no extension.
func applyTypeList(exts map[string]any, list, field string, p *problems) {
	for entry := range strings.SplitSeq(list, ",") {
		name, kindName, ok := strings.Cut(entry, ":")
		k := kindByName(kindName)
		if !ok || k == KindInvalid {
			p.add(field, "bad type entry "+strconv.Quote(entry))
			continue
		}
		raw, present := exts[name]
		if KindOf(raw) == k {
			continue // already typed (structured JSON carries integers and booleans)
		}
		s, ok := raw.(string)
		if !present || !ok {
			p.add(field, "names extension "+strconv.Quote(name)+" which is absent or not a string")
			continue
		}
		v, err := ParseValue(k, s)
		if err != nil {
			p.add(name, err.Error())
			continue
		}
		exts[name] = v
	}
}
