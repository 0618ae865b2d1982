package gateway

import "math"

// statusTotals are the gateway's totals since it started, as its clients
// saw them. MetricsOff is set when the gateway runs without metrics, which
// keep these counts; the totals are then zero.
type statusTotals struct {
	Requests uint64 `json:"requests"`
	// Errors are the requests answered with an error status, of which
	// Errors5xx the gateway's or the providers' and Errors4xx refusals
	// (bad requests, budgets, limits).
	Errors       uint64  `json:"errors"`
	Errors4xx    uint64  `json:"errors_4xx"`
	Errors5xx    uint64  `json:"errors_5xx"`
	Failovers    uint64  `json:"failovers"`
	CacheHits    uint64  `json:"cache_hits"`
	CacheStale   uint64  `json:"cache_stale"`
	CacheLookups uint64  `json:"cache_lookups"`
	CostUSD      float64 `json:"cost_usd"`
	MetricsOff   bool    `json:"metrics_off,omitempty"`
}

// statusClient is a client key's spend against its budget. Limits and
// what is left are absent for a period without a budget.
type statusClient struct {
	Name         string   `json:"name"`
	SpentUSD     float64  `json:"spent_usd"`
	DailyLimit   *float64 `json:"daily_limit_usd,omitempty"`
	DailyLeft    *float64 `json:"daily_left_usd,omitempty"`
	MonthlyLimit *float64 `json:"monthly_limit_usd,omitempty"`
	MonthlyLeft  *float64 `json:"monthly_left_usd,omitempty"`
}

// totals reads the gateway's totals and each client's spend.
func (s *Server) totals() (statusTotals, []statusClient) {
	m := s.metrics.Totals()
	t := statusTotals{Requests: m.Requests, Errors: m.Status4xx + m.Status5xx, Errors4xx: m.Status4xx, Errors5xx: m.Status5xx,
		Failovers: m.Failovers, CacheHits: m.CacheHits, CacheStale: m.CacheStale, CacheLookups: m.CacheLookups,
		MetricsOff: s.metrics == nil}
	for _, c := range m.ClientCostUSD {
		t.CostUSD += c
	}
	budgets := map[string]int{}
	left := s.budgetsLeft()
	for i, b := range left {
		budgets[b.Client] = i
	}
	clients := []statusClient{}
	for _, c := range s.state().clients {
		sc := statusClient{Name: c.name, SpentUSD: m.ClientCostUSD[c.name]}
		if i, ok := budgets[c.name]; ok {
			b := left[i]
			if !math.IsNaN(b.Daily) {
				sc.DailyLimit, sc.DailyLeft = &b.DailyLimit, &b.Daily
			}
			if !math.IsNaN(b.Monthly) {
				sc.MonthlyLimit, sc.MonthlyLeft = &b.MonthlyLimit, &b.Monthly
			}
		}
		clients = append(clients, sc)
	}
	return t, clients
}
