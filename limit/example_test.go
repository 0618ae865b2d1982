package limit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/limit"
)

// A Pacer holds a caller to a provider's requests and tokens per minute: the
// token estimate is reserved before the call and settled from the usage.
func ExamplePacer() {
	fake := clocktest.New(time.Time{})
	p, _ := limit.NewPacer(limit.PacerSettings{
		Limits: limit.Limits{RequestsPerMinute: 500, TokensPerMinute: 90_000},
		Clock:  fake,
	})

	r, _ := p.Wait(context.Background(), 60_000) // estimate: prompt + max_tokens
	r.Settle(12_000)                             // the response's usage: 48k refunded

	ok, _ := p.Allow(70_000)
	fmt.Println("70k more now:", ok)
	ok, retryIn := p.Allow(30_000)
	fmt.Println("30k more now:", ok, "retry in", retryIn)
	// Output:
	// 70k more now: true
	// 30k more now: false retry in 14.666666667s
}

// A request larger than the token burst is not refused: it waits for a full
// bucket, goes alone, and the debt it leaves makes later calls wait.
func ExamplePacer_oversized() {
	fake := clocktest.New(time.Time{})
	p, _ := limit.NewPacer(limit.PacerSettings{
		Limits: limit.Limits{TokensPerMinute: 90_000},
		Clock:  fake,
	})
	ok, _ := p.Allow(100_000)
	fmt.Println("100k under a 90k TPM limit:", ok)
	ok, retryIn := p.Allow(1_000)
	fmt.Println("then 1k:", ok, "retry in", retryIn)
	// Output:
	// 100k under a 90k TPM limit: true
	// then 1k: false retry in 7.333333334s
}

// After a 429 with Retry-After, Block pauses the Pacer; a Wait that cannot
// finish within MaxWait fails at once with the time to retry.
func ExamplePacer_Block() {
	fake := clocktest.New(time.Time{})
	p, _ := limit.NewPacer(limit.PacerSettings{MaxWait: 5 * time.Second, Clock: fake})
	p.Block(fake.Now().Add(20 * time.Second))

	_, err := p.Wait(context.Background(), 100)
	var le *limit.LimitedError
	fmt.Println(errors.Is(err, limit.ErrLimited), errors.As(err, &le) && le.RetryAfter == 20*time.Second)
	// Output: true true
}

// A Bulkhead bounds calls in flight; an Adaptive halves its limit on
// throttles and grows it back on success.
func ExampleAdaptive() {
	b, _ := limit.NewBulkhead(limit.BulkheadSettings{MaxWaiting: 100})
	a, _ := limit.NewAdaptive(limit.AdaptiveSettings{Max: 16, SuccessRun: 10, Target: b})

	for range 50 { // fifty calls sent together all got a 429
		a.OnBackoff()
	}
	fmt.Println("after the 429s:", b.Limit())
	for range 10 {
		a.OnSuccess()
	}
	fmt.Println("after 10 successes:", b.Limit())
	// Output:
	// after the 429s: 8
	// after 10 successes: 9
}

func ExampleBulkhead() {
	b, _ := limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: 1, MaxWaiting: -1})
	if err := b.Acquire(context.Background()); err == nil {
		defer b.Release()
	}
	fmt.Println(b.TryAcquire(), b.InFlight())
	fmt.Println(b.Acquire(context.Background()))
	// Output:
	// false 1
	// limit: bulkhead full
}

// Callers of two flows queue for one slot. The batch flow queued a burst of
// six first, yet while both flows wait, chat, at weight 2, gets two slots to
// batch's one; each flow is served in FIFO order.
func ExampleBulkhead_AcquireFlow() {
	ctx := context.Background()
	b, _ := limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: 1})
	_ = b.Acquire(ctx) // the slot is busy, so the callers below queue

	served := make(chan string)
	queue := func(flow string, weight float64, n int) {
		for i := range n {
			call := fmt.Sprintf("%s-%d", flow, i)
			queued := b.Waiting()
			go func() {
				if b.AcquireFlow(ctx, flow, weight) == nil {
					served <- call // it holds the slot until the next Release
				}
			}()
			for b.Waiting() == queued { // queue in a known order
				runtime.Gosched()
			}
		}
	}
	queue("batch", 1, 6)
	queue("chat", 2, 4)

	for range 10 {
		b.Release() // the slot goes to the next caller in fair order
		fmt.Println(<-served)
	}
	b.Release()
	// Output:
	// chat-0
	// batch-0
	// chat-1
	// chat-2
	// batch-1
	// chat-3
	// batch-2
	// batch-3
	// batch-4
	// batch-5
}
