package metrics

import "github.com/prometheus/client_golang/prometheus"

// WatchRequestLog exports the request log's counts: records written, and
// records dropped because its writer was behind.
func (m *Metrics) WatchRequestLog(written, dropped func() uint64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fusebox_request_log_written_total",
			Help: "Requests written to the request log."}, func() float64 { return float64(written()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fusebox_request_log_dropped_total",
			Help: "Requests left out of the request log because its writer was behind (never waited for)."},
			func() float64 { return float64(dropped()) }),
	)
}
