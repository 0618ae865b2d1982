package router

import (
	"fmt"
	"slices"

	"github.com/fuseboxhq/fusebox/breaker"
)

// Strategy orders an alias's targets for a request. Whatever the order, the
// walk skips targets whose breaker refuses or whose limits cannot admit.
type Strategy uint8

const (
	// Fallback tries the targets in the order listed.
	Fallback Strategy = iota
	// Weighted draws the order at random, each next target with a
	// probability proportional to its weight.
	Weighted
	// LeastLatency tries the target with the lowest recent latency first;
	// targets not yet measured go first, to be measured.
	LeastLatency
	// CheapestHealthy tries the cheapest target first (input plus output
	// price), among those whose breaker is not open; open ones go last.
	CheapestHealthy
)

// ParseStrategy reads a strategy's configuration name.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "", "fallback":
		return Fallback, nil
	case "weighted":
		return Weighted, nil
	case "least-latency":
		return LeastLatency, nil
	case "cheapest-healthy":
		return CheapestHealthy, nil
	}
	return 0, fmt.Errorf("unknown strategy %q (want fallback, weighted, least-latency or cheapest-healthy)", s)
}

// String returns the configuration name.
func (s Strategy) String() string {
	return [...]string{"fallback", "weighted", "least-latency", "cheapest-healthy"}[s]
}

// order returns the targets in the order to try them. Fallback returns the
// alias's own slice; the others a new one.
func (a *Alias) order(rnd func() float64) []*Target {
	if a.Strategy == Fallback || len(a.Targets) < 2 {
		return a.Targets
	}
	idx := make([]int, len(a.Targets))
	for i := range idx {
		idx[i] = i
	}
	switch a.Strategy {
	case Weighted:
		idx = a.weightedOrder(idx, rnd)
	case LeastLatency:
		slices.SortStableFunc(idx, func(i, j int) int {
			li, lj := a.Targets[i].health.snapshot().Latency, a.Targets[j].health.snapshot().Latency
			return cmpDur(li, lj)
		})
	case CheapestHealthy:
		slices.SortStableFunc(idx, func(i, j int) int {
			oi, oj := refusing(a.Targets[i]), refusing(a.Targets[j])
			if oi != oj {
				if oi {
					return 1
				}
				return -1
			}
			pi, pj := a.prices[i].Input+a.prices[i].Output, a.prices[j].Input+a.prices[j].Output
			switch {
			case pi < pj:
				return -1
			case pi > pj:
				return 1
			}
			return 0
		})
	}
	out := make([]*Target, len(idx))
	for i, j := range idx {
		out[i] = a.Targets[j]
	}
	return out
}

func cmpDur(a, b interface{ Nanoseconds() int64 }) int {
	x, y := a.Nanoseconds(), b.Nanoseconds()
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// weightedOrder draws targets one by one without replacement, each with
// probability proportional to its weight (a weight of 0 counts as 1).
func (a *Alias) weightedOrder(idx []int, rnd func() float64) []int {
	out := make([]int, 0, len(idx))
	for len(idx) > 0 {
		total := 0.0
		for _, i := range idx {
			total += a.weight(i)
		}
		x := rnd() * total
		pick := len(idx) - 1
		for k, i := range idx {
			if x < a.weight(i) {
				pick = k
				break
			}
			x -= a.weight(i)
		}
		out = append(out, idx[pick])
		idx = append(idx[:pick], idx[pick+1:]...)
	}
	return out
}

func (a *Alias) weight(i int) float64 {
	if w := a.weights[i]; w > 0 {
		return w
	}
	return 1
}

// refusing reports whether t's breaker is open or forced open.
func refusing(t *Target) bool {
	s := t.breaker.State()
	return s == breaker.StateOpen || s == breaker.StateForcedOpen
}
