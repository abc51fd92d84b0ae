// Command benchtable turns `go test -bench` output into the table `make bench` prints:
// each comparison benchmark's `hub` sub-benchmark beside every `base_*` sub-benchmark
// measured in the same run, as medians and as a ratio.
//
// The ratio is baseline ns/op divided by hub ns/op, i.e. hub throughput relative to the
// baseline: 1.00x is parity, 0.5x is half as fast, 10x is ten times faster. Machines are
// noisy, so only medians and ratios are printed, never a single run.
//
// `make bench` runs the whole suite BENCHCOUNT times, one run of each benchmark per
// round, rather than `-count BENCHCOUNT` (which runs each benchmark's runs back to back,
// so a slow minute of the machine lands on one contender). The n-th result of a hub and
// of its baseline then come from the same round, seconds apart: the ratio printed is the
// median of those per-round ratios, and RANGE their lowest and highest, which says how
// much the machine moved the comparison. When the counts differ (a run failed), the
// ratio falls back to the ratio of the medians and RANGE is "-".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// line matches `BenchmarkName/sub-8   1000   123.4 ns/op   ...metrics`.
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

type sample map[string][]float64 // unit -> values

func main() {
	markdown := flag.Bool("md", false, "print a Markdown table")
	flag.Parse()
	results, order, pkgOf := parse(os.Stdin)
	print(os.Stdout, results, order, pkgOf, *markdown)
}

func parse(r io.Reader) (map[string]sample, []string, map[string]string) {
	results := map[string]sample{}
	pkgOf := map[string]string{}
	var order []string
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = strings.TrimPrefix(p, "github.com/koder/eventhub/")
			continue
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		// Benchmarks are keyed by package too: BenchmarkPublish exists in several.
		name := pkg + "\x00" + m[1]
		if _, ok := results[name]; !ok {
			results[name] = sample{}
			order = append(order, name)
			pkgOf[name] = pkg
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			results[name][f[i+1]] = append(results[name][f[i+1]], v)
		}
	}
	return results, order, pkgOf
}

// benchName drops the package key and the "Benchmark" prefix.
func benchName(key string) string {
	_, name, _ := strings.Cut(key, "\x00")
	return strings.TrimPrefix(name, "Benchmark")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pairedRatio returns the median and the range of base[i]/hub[i] over the rounds, or
// the ratio of the medians (and ok false) when the rounds do not pair up.
func pairedRatio(hub, base []float64) (ratio, lo, hi float64, ok bool) {
	if len(hub) == 0 || len(hub) != len(base) || slices.Contains(hub, 0) {
		if m := median(hub); m > 0 {
			return median(base) / m, 0, 0, false
		}
		return 0, 0, 0, false
	}
	r := make([]float64, len(hub))
	for i := range hub {
		r[i] = base[i] / hub[i]
	}
	return median(r), slices.Min(r), slices.Max(r), true
}

// split returns the comparison's parent name and the role of a sub-benchmark.
func split(name string) (parent, role string) {
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i+1:]
}

func print(w io.Writer, results map[string]sample, order []string, pkgOf map[string]string, md bool) {
	type row struct{ pkg, bench, base, hubNs, baseNs, ratio, spread, extra string }
	var rows []row
	extraOf := func(s sample) string {
		var parts []string
		var units []string
		for u := range s {
			if u != "ns/op" && u != "B/op" && u != "allocs/op" && u != "MB/s" {
				units = append(units, u)
			}
		}
		slices.Sort(units)
		for _, u := range units {
			parts = append(parts, fmt.Sprintf("%s=%.3g", u, median(s[u])))
		}
		return strings.Join(parts, " ")
	}
	seen := map[string]bool{}
	for _, name := range order {
		parent, role := split(name)
		if role != "hub" || seen[parent] {
			continue
		}
		seen[parent] = true
		hub := results[name]
		hubNs := median(hub["ns/op"])
		bases := 0
		for _, other := range order {
			p, r := split(other)
			if p != parent || !strings.HasPrefix(r, "base_") {
				continue
			}
			bases++
			baseNs := median(results[other]["ns/op"])
			ratio, spread := "n/a", "-"
			if q, lo, hi, paired := pairedRatio(hub["ns/op"], results[other]["ns/op"]); q > 0 {
				ratio = fmt.Sprintf("%.2fx", q)
				if paired && len(hub["ns/op"]) > 1 {
					spread = fmt.Sprintf("%.2f-%.2f", lo, hi)
				}
			}
			rows = append(rows, row{pkgOf[name], benchName(parent), strings.TrimPrefix(r, "base_"),
				fmt.Sprintf("%.0f", hubNs), fmt.Sprintf("%.0f", baseNs), ratio, spread, strings.TrimSpace(extraOf(hub) + " " + extraOf(results[other]))})
		}
		if bases == 0 {
			rows = append(rows, row{pkgOf[name], benchName(parent), "-", fmt.Sprintf("%.0f", hubNs), "-", "-", "-", extraOf(hub)})
		}
	}
	if md {
		fmt.Fprintln(w, "| package | benchmark | baseline | hub ns/op | baseline ns/op | hub vs baseline | range over rounds | other medians (hub, baseline) |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.pkg, r.bench, r.base, r.hubNs, r.baseNs, r.ratio, r.spread, r.extra)
		}
		return
	}
	fmt.Fprintf(w, "%-22s %-28s %-22s %12s %14s %9s %11s  %s\n", "PACKAGE", "BENCHMARK", "BASELINE", "HUB ns/op", "BASE ns/op", "RATIO", "RANGE", "OTHER MEDIANS")
	for _, r := range rows {
		fmt.Fprintf(w, "%-22s %-28s %-22s %12s %14s %9s %11s  %s\n", r.pkg, r.bench, r.base, r.hubNs, r.baseNs, r.ratio, r.spread, r.extra)
	}
}
