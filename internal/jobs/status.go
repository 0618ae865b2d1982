package jobs

import (
	"slices"
	"strings"
)

// TargetStatus is the state of one target of the job aliases.
type TargetStatus struct {
	// Name is provider/model.
	Name string
	// Submit and Resubmit are the states of its two breakers.
	Submit, Resubmit string
	// Cap is the most jobs it may have in flight now; InFlight how many it
	// has.
	Cap, InFlight int
}

// Status returns the state of every target, sorted by name.
func (j *Jobs) Status() []TargetStatus {
	out := make([]TargetStatus, 0, len(j.targets))
	for _, t := range j.targets {
		out = append(out, TargetStatus{Name: t.name, Submit: t.submit.State().String(), Resubmit: t.resubmit.State().String(),
			Cap: t.cap.Limit(), InFlight: t.slots.InFlight()})
	}
	slices.SortFunc(out, func(a, b TargetStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}
