package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTablePairsHubWithEachBaseline(t *testing.T) {
	t.Parallel()
	in := `pkg: github.com/koder/eventhub/transports/redisstream
BenchmarkPublish/hub-2         	    1000	       200 ns/op	 1.5 p99-ms
BenchmarkPublish/base_raw_xadd-2 	    1000	       100 ns/op
BenchmarkPublish/hub-2         	    1000	       300 ns/op	 2.5 p99-ms
BenchmarkPublish/base_raw_xadd-2 	    1000	       120 ns/op
BenchmarkPublish/hub-2         	    1000	       250 ns/op	 1.0 p99-ms
BenchmarkPublish/base_raw_xadd-2 	    1000	       110 ns/op
BenchmarkOnly/hub-2 	    1000	       50 ns/op
pkg: github.com/koder/eventhub/hub
BenchmarkPublish/hub-2         	    1000	       900 ns/op
BenchmarkPublish/base_gochannel-2 	    1000	       300 ns/op
`
	got := markdown(in)
	for _, want := range []string{"| transports/redisstream | Publish | raw_xadd | 250 | 110 | 0.44x | 0.40-0.50 | p99-ms=1.5 |", "| Only | - | 50 |", "| hub | Publish | gochannel | 900 | 300 | 0.33x | - |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// Rounds pair up: a round where the machine slowed one contender moves RANGE, not the
// ratio, which the ratio of the medians would (150 against 95: 0.63x).
func TestTableRatioIsTheMedianOfRoundRatios(t *testing.T) {
	t.Parallel()
	in := `pkg: github.com/koder/eventhub/transports/natsjs
BenchmarkPublish/hub-2 	 1000	 100 ns/op
BenchmarkPublish/base_raw-2 	 1000	 95 ns/op
BenchmarkPublish/hub-2 	 1000	 200 ns/op
BenchmarkPublish/base_raw-2 	 1000	 190 ns/op
BenchmarkPublish/hub-2 	 1000	 150 ns/op
BenchmarkPublish/base_raw-2 	 1000	 60 ns/op
BenchmarkLost/hub-2 	 1000	 100 ns/op
BenchmarkLost/base_raw-2 	 1000	 50 ns/op
BenchmarkLost/hub-2 	 1000	 300 ns/op
`
	got := markdown(in)
	for _, want := range []string{
		"| transports/natsjs | Publish | raw | 150 | 95 | 0.95x | 0.40-0.95 |",
		"| transports/natsjs | Lost | raw | 200 | 50 | 0.25x | - |", // counts differ: medians' ratio
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// markdown is the Markdown table of the benchmark output in.
func markdown(in string) string {
	res, order, pkg := parse(strings.NewReader(in))
	var out bytes.Buffer
	print(&out, res, order, pkg, true)
	return out.String()
}
