package metrics

import "github.com/prometheus/client_golang/prometheus"

var vectorCoverageDesc = prometheus.NewDesc("engram_vector_coverage",
	"Share of memories (active, pending, archived) with a vector in the configured embedding model; below 1 while a new model is re-embedded.",
	[]string{"model"}, nil)

// WatchVectorCoverage exports engram_vector_coverage{model}, read at scrape time from
// read (the last count; ok false: not counted yet, nothing exported).
func (m *Metrics) WatchVectorCoverage(model string, read func() (ratio float64, ok bool)) {
	m.reg.MustRegister(coverageCollector{model: model, read: read})
}

type coverageCollector struct {
	model string
	read  func() (float64, bool)
}

func (c coverageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- vectorCoverageDesc }

func (c coverageCollector) Collect(ch chan<- prometheus.Metric) {
	if r, ok := c.read(); ok {
		ch <- prometheus.MustNewConstMetric(vectorCoverageDesc, prometheus.GaugeValue, r, c.model)
	}
}
