package breaker

// State is a breaker's state.
type State uint8

// The states. Closed, Open and HalfOpen are the automatic cycle; the forced
// states and Disabled are set by an operator and left only by Reset (or by
// setting another manual state).
const (
	// StateClosed admits calls and records their outcomes.
	StateClosed State = iota
	// StateOpen refuses calls until its open period ends.
	StateOpen
	// StateHalfOpen admits a limited number of probe calls.
	StateHalfOpen
	// StateForcedOpen refuses every call until Reset.
	StateForcedOpen
	// StateForcedClosed admits every call and never trips; outcomes count
	// only in the totals.
	StateForcedClosed
	// StateDisabled admits every call and records outcomes in the window, so
	// Snapshot shows what would trip, but never trips.
	StateDisabled
)

// String returns the state's name, as used in metrics and logs.
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateOpen:
		return "open"
	case StateHalfOpen:
		return "half-open"
	case StateForcedOpen:
		return "forced-open"
	case StateForcedClosed:
		return "forced-closed"
	case StateDisabled:
		return "disabled"
	}
	return "unknown"
}
