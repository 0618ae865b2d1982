package metrics

import "github.com/prometheus/client_golang/prometheus"

// StateBackend is the metrics of the shared state (state: redis://…).
type StateBackend struct {
	up        prometheus.Gauge
	errors    *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
}

// StateBackend registers and returns the shared state's metrics; nil on a
// nil Metrics, whose methods do nothing.
func (m *Metrics) StateBackend() *StateBackend {
	if m == nil {
		return nil
	}
	s := &StateBackend{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fusebox_state_backend_up", Help: "1 while the shared state's Redis answers, 0 while this replica goes on with its own state.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_state_backend_errors_total", Help: "Failed calls to the shared state's Redis, by operation.",
		}, []string{"op"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_state_backend_fallbacks_total", Help: "Decisions made on this replica's own state because Redis could not be asked, by operation.",
		}, []string{"op"}),
	}
	s.up.Set(1)
	m.reg.MustRegister(s.up, s.errors, s.fallbacks)
	return s
}

// Up sets whether Redis answers.
func (s *StateBackend) Up(up bool) {
	if s == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	s.up.Set(v)
}

// Error counts a failed call to Redis for op.
func (s *StateBackend) Error(op string) {
	if s != nil {
		s.errors.WithLabelValues(op).Inc()
	}
}

// Fallback counts a decision made locally for op.
func (s *StateBackend) Fallback(op string) {
	if s != nil {
		s.fallbacks.WithLabelValues(op).Inc()
	}
}
