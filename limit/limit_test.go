package limit

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the start of every step table.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// runtimeGosched yields while a test polls for goroutines to queue.
func runtimeGosched() { runtime.Gosched() }
