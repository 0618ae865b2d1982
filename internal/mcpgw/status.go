package mcpgw

import "github.com/fuseboxhq/fusebox/breaker"

// ServerStatus is one upstream server as the status document shows it.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Tools is how many tools the server offers, as last listed (0 before
	// its first listing).
	Tools    int             `json:"tools"`
	Listed   bool            `json:"listed"`
	Replicas []ReplicaStatus `json:"replicas"`
}

// ReplicaStatus is one replica: its breaker, and whether it has a
// session now. Its endpoint is not shown (a URL may carry a secret in its
// path or query).
type ReplicaStatus struct {
	Name      string  `json:"name"`
	Connected bool    `json:"connected"`
	State     string  `json:"state"`
	RetryIn   float64 `json:"retry_in_seconds,omitempty"`
	// Tools are the tools whose own breakers are not closed
	// (breaker_per_tool), by name.
	Tools map[string]string `json:"tools,omitempty"`
}

// Status returns every server's state, in configured order.
func (g *Gateway) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(g.servers))
	for _, s := range g.servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, Transport: string(s.cfg.Transport), Tools: len(s.cat.tools), Listed: s.cat.listed}
		s.mu.Unlock()
		for _, r := range s.replicas {
			st.Replicas = append(st.Replicas, r.status())
		}
		out = append(out, st)
	}
	return out
}

// status returns the replica's state.
func (r *replica) status() ReplicaStatus {
	snap := r.breaker.Snapshot()
	r.mu.Lock()
	rs := ReplicaStatus{Name: r.name, Connected: r.cs != nil, State: snap.State.String(), RetryIn: snap.RetryAfter.Seconds()}
	r.mu.Unlock()
	r.tools.Range(func(k, v any) bool {
		if st := v.(*breaker.Breaker).State(); st != breaker.StateClosed {
			if rs.Tools == nil {
				rs.Tools = map[string]string{}
			}
			rs.Tools[k.(string)] = st.String()
		}
		return true
	})
	return rs
}

// Breakers returns every breaker of the gateway (replicas', then tools'),
// for the admin API and the metrics.
func (g *Gateway) Breakers() []*breaker.Breaker {
	var out []*breaker.Breaker
	for _, s := range g.servers {
		for _, r := range s.replicas {
			out = append(out, r.breaker)
			r.tools.Range(func(_, v any) bool { out = append(out, v.(*breaker.Breaker)); return true })
		}
	}
	return out
}
