package app

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

func TestHA_InstanceID(t *testing.T) {
	t.Parallel()
	if got := InstanceID(&config.Config{InstanceID: "hub-eu-1"}); got != "hub-eu-1" {
		t.Errorf("configured id: %q", got)
	}
	def := InstanceID(&config.Config{})
	if !strings.HasSuffix(def, "-"+strconv.Itoa(os.Getpid())) || def != InstanceID(nil) {
		t.Errorf("default id %q, want <hostname>-<pid>", def)
	}
	for id, ok := range map[string]bool{"replica-a": true, "eu.west:1_b": true, "has space": false, "quote\"": false, strings.Repeat("a", 129): false} {
		_, ps := config.Parse("hub.yaml", t.TempDir(), []byte("instance_id: "+strconv.Quote(id)+"\n"), func(string) (string, bool) { return "", false })
		if (len(ps) == 0) != ok {
			t.Errorf("instance_id %q: problems %v", id, ps)
		}
		if len(ps) > 0 && !strings.Contains(ps[0].String(), "instance_id") {
			t.Errorf("problem does not name instance_id: %v", ps[0])
		}
	}
}

func TestHA_InstanceLabel(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "events_total"}, []string{"z", "a"})
	c.WithLabelValues("1", "2").Inc()
	reg.MustRegister(c, prometheus.NewGauge(prometheus.GaugeOpts{Name: "up_gauge"}))
	mfs, err := instanceGatherer{g: reg, id: "replica-a"}.Gather()
	if err != nil || len(mfs) != 2 {
		t.Fatalf("Gather: %d families, %v", len(mfs), err)
	}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			var names []string
			found := false
			for _, l := range m.Label {
				names = append(names, l.GetName())
				found = found || (l.GetName() == InstanceLabel && l.GetValue() == "replica-a")
			}
			if !found || !sortedStrings(names) {
				t.Errorf("%s labels %v: want %s=replica-a, sorted", mf.GetName(), names, InstanceLabel)
			}
		}
	}
	// A second gather of the same registry is labelled once, not twice.
	mfs, _ = instanceGatherer{g: reg, id: "replica-a"}.Gather()
	if n := len(mfs[0].Metric[0].Label); n != 3 {
		t.Errorf("labels after a second gather: %d, want 3", n)
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}
