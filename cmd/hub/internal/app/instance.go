package app

import (
	"fmt"
	"log/slog"
	"os"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// InstanceLabel is the label every exported metric carries with the instance id. Not
// "instance": Prometheus sets that one to the scrape target, and a metric bringing its
// own would be renamed exported_instance (or would win, with honor_labels) at scrape.
const InstanceLabel = "hub_instance"

// InstanceID is the id of this process among replicas: the config's instance_id, else
// "<hostname>-<pid>", which is unique on a host and stays readable in a log. A
// restarted process gets a new default id, on purpose: its metrics are a new series,
// and its log lines tell the runs apart.
func InstanceID(c *config.Config) string {
	if c != nil && c.InstanceID != "" {
		return c.InstanceID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "hub"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// WithInstance returns logger with the instance id on every record, for the logger
// the binary builds before anything else uses it.
func WithInstance(logger *slog.Logger, c *config.Config) *slog.Logger {
	return logger.With("instance", InstanceID(c))
}

// instanceGatherer adds the hub_instance label to every metric it gathers. Labelling at
// gather time rather than registration time leaves every collector as it is (the
// console reads the plain registry) and covers collectors that modules register
// themselves.
type instanceGatherer struct {
	g  prometheus.Gatherer
	id string
}

// Gather implements prometheus.Gatherer.
func (ig instanceGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := ig.g.Gather()
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if hasLabel(m, InstanceLabel) {
				continue
			}
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(InstanceLabel), Value: proto.String(ig.id)})
			sort.Slice(m.Label, func(i, j int) bool { return m.Label[i].GetName() < m.Label[j].GetName() })
		}
	}
	return mfs, err
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.Label {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

// gatherer is what /metrics exposes: the registry, labelled with the instance id.
func (a *App) gatherer() prometheus.Gatherer {
	return instanceGatherer{g: a.reg, id: InstanceID(&a.plan.File.Config)}
}
