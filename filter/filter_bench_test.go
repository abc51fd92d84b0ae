package filter_test

import (
	"testing"

	"github.com/koder/eventhub/filter"
)

// BenchmarkFilter is the cost of a filter per event: "hub" evaluates a typical route
// filter (an extension and a data path), "base_none" is the same event through no
// filter (a nil *Filter, what a route without one pays).
func BenchmarkFilter(b *testing.B) {
	ev := orderEvent(b, `{"plan":"pro","seats":12,"customer":{"country":"PT"}}`)
	b.Run("hub", func(b *testing.B) {
		f := filter.MustCompile("tenantid = 'acme' AND data.plan = 'pro'")
		b.ReportAllocs()
		for b.Loop() {
			if !f.Match(ev) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("base_none", func(b *testing.B) {
		var f *filter.Filter
		b.ReportAllocs()
		for b.Loop() {
			if !f.Match(ev) {
				b.Fatal("no match")
			}
		}
	})
}

// BenchmarkFilterAttributesOnly is a filter on context attributes alone (no data
// path), against the same expression through the SDK's parser on an SDK event: what
// the conversion from the hub's event costs.
func BenchmarkFilterAttributesOnly(b *testing.B) {
	ev := orderEvent(b, `{"plan":"pro"}`)
	b.Run("hub", func(b *testing.B) {
		f := filter.MustCompile("tenantid = 'acme' AND type LIKE 'order.%'")
		b.ReportAllocs()
		for b.Loop() {
			if !f.Match(ev) {
				b.Fatal("no match")
			}
		}
	})
}
