package clocktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

func TestTimersFireInOrder(t *testing.T) {
	c := New(time.Time{})
	t3 := c.NewTimer(3 * time.Second)
	t1 := c.NewTimer(time.Second)
	t2 := c.NewTimer(2 * time.Second)
	if got := c.Pending(); got != 3 {
		t.Fatalf("Pending = %d; want 3", got)
	}
	c.Advance(1500 * time.Millisecond)
	select {
	case <-t1.C():
	default:
		t.Fatal("1s timer did not fire after 1.5s")
	}
	select {
	case <-t2.C():
		t.Fatal("2s timer fired after 1.5s")
	default:
	}
	c.Advance(2 * time.Second)
	<-t2.C()
	<-t3.C()
	if got := c.Pending(); got != 0 {
		t.Fatalf("Pending = %d; want 0", got)
	}
}

func TestStopAndReset(t *testing.T) {
	c := New(time.Time{})
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of an active timer = false")
	}
	if tm.Stop() {
		t.Fatal("second Stop = true")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer = true")
	}
	c.Advance(time.Second)
	if got, want := <-tm.C(), c.Now(); !got.Equal(want) {
		t.Fatalf("fired at %v; want %v", got, want)
	}
	if c.NewTimer(0) == nil || c.Pending() != 0 {
		t.Fatal("zero-duration timer should fire at once")
	}
}

func TestSleepWithWaitForTimers(t *testing.T) {
	c := New(time.Time{})
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs <- clock.Sleep(context.Background(), c, time.Minute)
	}()
	c.WaitForTimers(1)
	c.Advance(time.Minute)
	wg.Wait()
	if err := <-errs; err != nil {
		t.Fatalf("Sleep = %v; want nil", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs <- clock.Sleep(ctx, c, time.Minute)
	}()
	c.WaitForTimers(1)
	cancel()
	wg.Wait()
	if err := <-errs; err != context.Canceled {
		t.Fatalf("Sleep = %v; want context.Canceled", err)
	}
	if c.Pending() != 0 {
		t.Fatal("cancelled Sleep left its timer pending")
	}
}

func TestStopwatchOnFake(t *testing.T) {
	c := New(time.Time{})
	sw := clock.NewStopwatch(c)
	c.Advance(1500 * time.Millisecond)
	if got := sw.Elapsed(); got != 1500*time.Millisecond {
		t.Fatalf("Elapsed = %v; want 1.5s", got)
	}
	if got := sw.Time(time.Second); !got.Equal(New(time.Time{}).Now().Add(time.Second)) {
		t.Fatalf("Time(1s) = %v", got)
	}
}

func TestAfterFunc(t *testing.T) {
	c := New(time.Time{})
	var got []string
	c.AfterFunc(2*time.Second, func() { got = append(got, "2s at "+c.Now().Format("05")) })
	stopped := c.AfterFunc(time.Second, func() { got = append(got, "stopped") })
	c.AfterFunc(time.Second, func() {
		// callbacks may use the clock, even schedule more
		c.AfterFunc(0, func() { got = append(got, "nested") })
		got = append(got, "1s")
	})
	if !stopped.Stop() {
		t.Fatal("Stop of a pending AfterFunc = false")
	}
	c.Advance(3 * time.Second)
	want := []string{"nested", "1s", "2s at 02"}
	if len(got) != len(want) {
		t.Fatalf("ran %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v; want %v", got, want)
		}
	}
	if c.Pending() != 0 {
		t.Fatalf("Pending = %d", c.Pending())
	}
}
