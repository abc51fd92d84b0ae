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
	res, order, pkg := parse(strings.NewReader(in))
	var out bytes.Buffer
	print(&out, res, order, pkg, true)
	got := out.String()
	for _, want := range []string{"| transports/redisstream | Publish | raw_xadd | 250 | 110 | 0.44x | p99-ms=1.5 |", "| Only | - | 50 |", "| hub | Publish | gochannel | 900 | 300 | 0.33x |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
