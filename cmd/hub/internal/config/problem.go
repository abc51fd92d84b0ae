package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a config file, located by line and column so an
// operator (or an editor jumping to compiler-style locations) lands on it at once.
type Problem struct {
	File string
	Line int
	Col  int
	Path string // dotted config path: transports.redis.url, routes[0].to[1]
	Msg  string
}

// String renders the problem as "file:line:col: path: message", the format `hub lint`
// prints and editors understand.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in one config, in file order. It is an error so the
// build path can return it whole; callers that want each entry range over it.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by position, so output is stable whatever order checks ran in.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Col < ps[j].Col
	})
}

// Err returns ps as an error, or nil when there is none.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func sortStrings(s []string) { sort.Strings(s) }

// dedupe sorts and keeps the first problem found at each position: a value that failed
// substitution or decoding would otherwise collect follow-on complaints.
func (ps Problems) dedupe() Problems {
	seen := map[[2]int]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := [2]int{p.Line, p.Col}
		if p.Line > 0 && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	out.Sort()
	return out
}
