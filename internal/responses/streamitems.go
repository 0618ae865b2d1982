package responses

// apply translates choice 0's delta and finish_reason.
func (s *Stream) apply(c *chunk) error {
	if len(c.content) > 0 {
		s.text(c.content)
	}
	if len(c.refusal) > 0 {
		s.refusal(c.refusal)
	}
	for i := range c.calls {
		if err := s.callDelta(&c.calls[i]); err != nil {
			return err
		}
	}
	if c.finish == finishError {
		return badChat("the upstream ended the answer with finish_reason error")
	}
	if c.finish != "" {
		s.finished = true
		s.res.finish(c.finish)
		s.closeOpen()
	}
	return nil
}

// message returns the open message, opening one (and closing an open
// call) if need be.
func (s *Stream) message() (*output, int) {
	if s.open >= 0 && !s.res.items[s.open].call {
		return &s.res.items[s.open], s.open
	}
	s.closeOpen()
	n := len(s.res.items)
	s.res.items = append(s.res.items, output{id: itemID("msg_", s.id, n), status: statusInProgress})
	s.open = n
	s.begin(evItemAdded)
	s.buf = appendInt(s.buf, "output_index", int64(n))
	s.buf = appendOutput(appendKey(s.buf, "item"), &s.res.items[n], false)
	s.end()
	return &s.res.items[n], n
}

// part returns the open message's last part, opening a part of the kind
// asked for if the last is of the other kind.
func (s *Stream) part(refusal bool) *outPart {
	m, n := s.message()
	if k := len(m.parts); k > 0 && m.parts[k-1].refusal == refusal {
		return &m.parts[k-1]
	}
	if k := len(m.parts); k > 0 {
		s.closePart(m, n, k-1)
	}
	m.parts = append(m.parts, outPart{refusal: refusal})
	k := len(m.parts) - 1
	s.begin(evPartAdded)
	s.partRef(m, n, k)
	s.buf = appendPart(appendKey(s.buf, "part"), &outPart{refusal: refusal})
	s.end()
	return &m.parts[k]
}

// partRef appends the item_id, output_index and content_index of a part.
func (s *Stream) partRef(m *output, n, k int) {
	s.buf = appendStringMember(s.buf, "item_id", m.id)
	s.buf = appendInt(s.buf, "output_index", int64(n))
	s.buf = appendInt(s.buf, "content_index", int64(k))
}

// text adds text to the open message.
func (s *Stream) text(delta []byte) {
	p := s.part(false)
	if len(delta) == 0 {
		return
	}
	p.text = append(p.text, delta...)
	m, n := &s.res.items[s.open], s.open
	s.begin(evTextDelta)
	s.partRef(m, n, len(m.parts)-1)
	s.buf = appendString(appendKey(s.buf, "delta"), delta)
	s.buf = append(s.buf, `,"logprobs":[]`...)
	s.end()
}

// refusal adds refusal text to the open message.
func (s *Stream) refusal(delta []byte) {
	p := s.part(true)
	p.text = append(p.text, delta...)
	m, n := &s.res.items[s.open], s.open
	s.begin(evRefusalDelta)
	s.partRef(m, n, len(m.parts)-1)
	s.buf = appendString(appendKey(s.buf, "delta"), delta)
	s.end()
}

// closePart emits the done events of part k of message n.
func (s *Stream) closePart(m *output, n, k int) {
	p := &m.parts[k]
	if p.refusal {
		s.begin(evRefusalDone)
		s.partRef(m, n, k)
		s.buf = appendString(appendKey(s.buf, "refusal"), p.text)
	} else {
		s.begin(evTextDone)
		s.partRef(m, n, k)
		s.buf = appendString(appendKey(s.buf, "text"), p.text)
		s.buf = append(s.buf, `,"logprobs":[]`...)
	}
	s.end()
	s.begin(evPartDone)
	s.partRef(m, n, k)
	s.buf = appendPart(appendKey(s.buf, "part"), p)
	s.end()
}

// closeOpen closes the open item, with the status the response's state
// gives.
func (s *Stream) closeOpen() {
	n := s.open
	if n < 0 {
		return
	}
	s.open = -1
	o := &s.res.items[n]
	if o.call {
		if !o.announced {
			s.announce(o, n)
		}
		s.begin(evArgsDone)
		s.buf = appendStringMember(s.buf, "item_id", o.id)
		s.buf = appendInt(s.buf, "output_index", int64(n))
		s.buf = appendString(appendKey(s.buf, "arguments"), o.args)
		s.end()
	} else if k := len(o.parts); k > 0 {
		s.closePart(o, n, k-1)
	}
	o.status = s.res.itemStatus()
	s.begin(evItemDone)
	s.buf = appendInt(s.buf, "output_index", int64(n))
	s.buf = appendOutput(appendKey(s.buf, "item"), o, true)
	s.end()
}

// callDelta applies one tool_calls delta. A delta starts a new call when
// it has another index than the open call, or another id; its name and
// argument fragments are added to the call. The call's
// output_item.added waits for its name (or its first arguments).
func (s *Stream) callDelta(d *callDelta) error {
	o := s.openCall()
	if o == nil || d.hasIndex && d.index != o.chatIndex || len(d.id) > 0 && o.chatID != "" && string(d.id) != o.chatID {
		if d.hasIndex && s.seen[d.index] && len(d.id) == 0 {
			return badChat("tool call %d resumed after another began", d.index)
		}
		o = s.newCall(d)
	}
	if o.chatID == "" && len(d.id) > 0 {
		o.chatID = string(d.id)
	}
	if !o.announced {
		o.name += string(d.name)
	}
	o.args = append(o.args, d.args...)
	n := s.open
	switch {
	case !o.announced && (o.name != "" || len(o.args) > 0):
		s.announce(o, n)
		if len(o.args) > 0 {
			s.argsDelta(o, n, o.args)
		}
	case o.announced && len(d.args) > 0:
		s.argsDelta(o, n, d.args)
	}
	return nil
}

// openCall returns the open function call, or nil.
func (s *Stream) openCall() *output {
	if s.open >= 0 && s.res.items[s.open].call {
		return &s.res.items[s.open]
	}
	return nil
}

// newCall closes the open item and opens a function call.
func (s *Stream) newCall(d *callDelta) *output {
	s.closeOpen()
	index := 0
	if d.hasIndex {
		index = d.index
	}
	if s.seen == nil {
		s.seen = make(map[int]bool)
	}
	s.seen[index] = true
	n := len(s.res.items)
	s.res.items = append(s.res.items, output{call: true, id: itemID("fc_", s.id, n), status: statusInProgress, chatIndex: index})
	s.open = n
	return &s.res.items[n]
}

// announce emits a call's output_item.added, fixing its call_id.
func (s *Stream) announce(o *output, n int) {
	o.announced = true
	o.callID = o.chatID
	if o.callID == "" {
		o.callID = itemID("call_", s.id, n)
	}
	added := *o
	added.args = nil // arguments "" when added; they follow as deltas
	s.begin(evItemAdded)
	s.buf = appendInt(s.buf, "output_index", int64(n))
	s.buf = appendOutput(appendKey(s.buf, "item"), &added, false)
	s.end()
}

func (s *Stream) argsDelta(o *output, n int, delta []byte) {
	s.begin(evArgsDelta)
	s.buf = appendStringMember(s.buf, "item_id", o.id)
	s.buf = appendInt(s.buf, "output_index", int64(n))
	s.buf = appendString(appendKey(s.buf, "delta"), delta)
	s.end()
}
