package breaker

// How transitions reach Config.OnStateChange: in the order they were made,
// one call at a time, never with b.mu held. A transition is queued under
// b.mu when it is made (setLocked); after releasing b.mu, whoever made it
// calls deliver, which drains the queue unless another goroutine already is
// draining it, in which case that goroutine delivers the new transition
// after the ones before it.

// queueLocked adds t to the transitions waiting for the listener.
func (b *Breaker) queueLocked(t Transition) {
	if b.head == len(b.queue) {
		b.queue, b.head = b.queue[:0], 0
	}
	b.queue = append(b.queue, t)
}

// deliver calls the listener for each queued transition, in order, unless
// another goroutine is doing so. Callers must not hold b.mu.
func (b *Breaker) deliver() {
	if b.cfg.OnStateChange == nil {
		return
	}
	b.mu.Lock()
	if b.delivering {
		b.mu.Unlock()
		return
	}
	b.delivering = true
	done := false
	defer func() {
		if !done {
			// The listener panicked: the next transition's maker
			// delivers what is left.
			b.mu.Lock()
			b.delivering = false
			b.mu.Unlock()
		}
	}()
	for b.head < len(b.queue) {
		t := b.queue[b.head]
		b.head++
		b.mu.Unlock()
		b.cfg.OnStateChange(t)
		b.mu.Lock()
	}
	// Still under b.mu: a transition queued from here on finds no one
	// delivering and delivers itself.
	b.delivering = false
	done = true
	b.mu.Unlock()
}
