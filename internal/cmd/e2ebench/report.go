package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

type report struct {
	raw    float64 // raw signed-POST loop, events/s
	stores []storeResult
}

// print writes one Markdown table of every scenario, then the goals as ratios
// of this run.
func (rep report) print(w io.Writer, o options) {
	fmt.Fprintf(w, "\nend to end, %d events of ~200 bytes, %d posters, batches of %d; raw signed-POST loop %.0f events/s\n\n",
		o.events, o.posters, o.batch, rep.raw)
	fmt.Fprintln(w, "| store | scenario | accepted/s | delivered/s | delivered / raw | p50 post→receive | p99 | CPU s / 1k events | peak RSS MiB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, st := range rep.stores {
		for _, r := range st.results {
			name := r.name
			if r.failed > 0 || r.missing > 0 || r.dups > 0 {
				name += fmt.Sprintf(" (%d failed requests, %d missing, %d duplicates)", r.failed, r.missing, r.dups)
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.3fx | %s | %s | %.3f | %.0f |\n",
				st.store, name, r.acceptedPS, r.deliveredPS, r.deliveredPS/rep.raw, ms(r.p50), ms(r.p99), r.cpuPer1k.Seconds(), r.rssMiB)
		}
	}
	for _, st := range rep.stores {
		if r, ok := st.find("batched"); ok && len(r.runs) > 1 {
			fmt.Fprintf(w, "\n%s batched, delivered/s per run on one database: %v (last/first %.2fx)\n",
				st.store, roundAll(r.runs), r.runs[len(r.runs)-1]/r.runs[0])
		}
	}
	fmt.Fprintln(w, "\ngoals (issue 18), ratios of this run:")
	goal := func(what string, got, want float64, unit string) {
		verdict := "met"
		if got < want {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "- %s: %.3f%s (goal >= %.2f%s): %s\n", what, got, unit, want, unit, verdict)
	}
	maxGoal := func(what string, got, limit time.Duration) {
		verdict := "met"
		if got > limit {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "- %s: %s (goal <= %s): %s\n", what, ms(got), ms(limit), verdict)
	}
	for _, st := range rep.stores {
		if r, ok := st.find("batched"); ok && st.store == "postgres" {
			goal("PostgreSQL batched delivered / raw", r.deliveredPS/rep.raw, 0.3, "x")
		}
		if st.store == "postgres" {
			on, ok1 := st.find("single")
			off, ok2 := st.find("single, commit per request")
			if ok1 && ok2 && off.acceptedPS > 0 {
				goal("PostgreSQL single-event accepted, group commit / commit per request", on.acceptedPS/off.acceptedPS, 4, "x")
			}
		}
		if r, ok := st.find("batched"); ok && st.store == "sqlite" {
			goal("SQLite default batched delivered / raw", r.deliveredPS/rep.raw, 0.15, "x")
		}
		if r, ok := st.find("latency"); ok {
			maxGoal(st.store+" p99 post→receive at the offered load", r.p99, 100*time.Millisecond)
		}
	}
}

func (st storeResult) find(prefix string) (result, bool) {
	for _, r := range st.results {
		if r.name == prefix || (prefix == "latency" && strings.HasPrefix(r.name, "latency")) {
			return r, true
		}
	}
	return result{}, false
}
