package cache

// item is an entry in the cache's map and in its recency list.
type item struct {
	key        KeyHash
	entry      Entry
	size       int64 // what the item counts against MaxBytes
	prev, next *item
}

// lru is an intrusive doubly linked list, most recently used first. The
// zero value is an empty list. It is not safe for concurrent use: the
// Cache's mutex guards it.
type lru struct {
	root item // root.next is the front, root.prev the back
	init bool
}

func (l *lru) lazyInit() {
	if !l.init {
		l.root.next, l.root.prev, l.init = &l.root, &l.root, true
	}
}

// pushFront inserts it at the front.
func (l *lru) pushFront(it *item) {
	l.lazyInit()
	it.prev, it.next = &l.root, l.root.next
	l.root.next.prev = it
	l.root.next = it
}

// remove takes it out of the list.
func (l *lru) remove(it *item) {
	it.prev.next, it.next.prev = it.next, it.prev
	it.prev, it.next = nil, nil
}

// moveToFront makes it the most recently used.
func (l *lru) moveToFront(it *item) {
	if l.root.next == it {
		return
	}
	l.remove(it)
	l.pushFront(it)
}

// back returns the least recently used item, or nil.
func (l *lru) back() *item {
	if !l.init || l.root.prev == &l.root {
		return nil
	}
	return l.root.prev
}
