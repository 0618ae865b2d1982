package router

import (
	"testing"

	"go.uber.org/goleak"
)

// The router starts goroutines of its own (hedged attempts, the losers'
// clean-up, background probes): none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
