package sim

import (
	"encoding/json"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/sse"
)

// responsesStream writes a Responses API stream: named events with
// sequence numbers from 0. response.created and response.in_progress;
// for a message, response.output_item.added, response.content_part.added,
// a response.output_text.delta per piece, response.output_text.done,
// response.content_part.done and response.output_item.done; for each
// function call, response.output_item.added, a
// response.function_call_arguments.delta per piece,
// response.function_call_arguments.done and response.output_item.done;
// then response.completed (response.incomplete when cut at
// max_output_tokens). A stream error is response.failed.
type responsesStream struct {
	rc  *responseCall
	sw  *sse.Writer
	seq int

	open  int             // the open item: itemNone, itemMessage or itemCall
	call  int             // the open function call's index
	text  strings.Builder // the open item's text or arguments so far
	items []any           // the items done
}

const (
	itemNone = iota
	itemMessage
	itemCall
)

// event is a stream event; every one embeds eventHead.
type event interface{ name() string }

// eventHead starts every event: its type and sequence number.
type eventHead struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
}

func (h eventHead) name() string { return h.Type }

type responseEvent struct {
	eventHead
	Response responseObject `json:"response"`
}

type itemEvent struct {
	eventHead
	OutputIndex int `json:"output_index"`
	Item        any `json:"item"`
}

type partEvent struct {
	eventHead
	ItemID       string     `json:"item_id"`
	OutputIndex  int        `json:"output_index"`
	ContentIndex int        `json:"content_index"`
	Part         outputText `json:"part"`
}

type textDeltaEvent struct {
	eventHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
	Delta        string `json:"delta"`
	Logprobs     []any  `json:"logprobs"`
}

type textDoneEvent struct {
	eventHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
	Text         string `json:"text"`
	Logprobs     []any  `json:"logprobs"`
}

type argsDeltaEvent struct {
	eventHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Delta       string `json:"delta"`
}

type argsDoneEvent struct {
	eventHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Arguments   string `json:"arguments"`
}

// next returns the next event's head.
func (f *responsesStream) next(typ string) eventHead {
	h := eventHead{Type: typ, SequenceNumber: f.seq}
	f.seq++
	return h
}

func (f *responsesStream) emit(ev event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		panic("sim: " + err.Error()) // the package's own types always marshal
	}
	return f.sw.WriteEvent(ev.name(), data)
}

func (f *responsesStream) begin(sw *sse.Writer) error {
	f.sw = sw
	for _, typ := range [...]string{"response.created", "response.in_progress"} {
		if err := f.emit(responseEvent{f.next(typ), f.rc.object("in_progress", nil, false)}); err != nil {
			return err
		}
	}
	return nil
}

func (f *responsesStream) step(ps []piece) error {
	for _, pc := range ps {
		if err := f.piece(pc); err != nil {
			return err
		}
	}
	return nil
}

func (f *responsesStream) piece(pc piece) error {
	at := len(f.items)
	switch {
	case pc.call < 0:
		if f.open != itemMessage {
			if err := f.openMessage(); err != nil {
				return err
			}
		}
		f.text.WriteString(pc.text)
		return f.emit(textDeltaEvent{f.next("response.output_text.delta"), f.rc.messageID(), at, 0, pc.text, []any{}})
	case pc.start:
		if err := f.closeItem(); err != nil {
			return err
		}
		f.open, f.call = itemCall, pc.call
		return f.emit(itemEvent{f.next("response.output_item.added"), len(f.items), f.rc.functionCall(pc.call, "in_progress", "")})
	}
	f.text.WriteString(pc.text)
	return f.emit(argsDeltaEvent{f.next("response.function_call_arguments.delta"), f.rc.callID(f.call), at, pc.text})
}

func (f *responsesStream) openMessage() error {
	f.open = itemMessage
	at := len(f.items)
	empty := messageItem{ID: f.rc.messageID(), Type: "message", Status: "in_progress", Role: "assistant", Content: []outputText{}}
	if err := f.emit(itemEvent{f.next("response.output_item.added"), at, empty}); err != nil {
		return err
	}
	return f.emit(partEvent{f.next("response.content_part.added"), f.rc.messageID(), at, 0, newOutputText("")})
}

// closeItem ends the open item, if any, with its done events.
func (f *responsesStream) closeItem() error {
	at, text := len(f.items), f.text.String()
	var item any
	switch f.open {
	case itemNone:
		return nil
	case itemMessage:
		id := f.rc.messageID()
		if err := f.emit(textDoneEvent{f.next("response.output_text.done"), id, at, 0, text, []any{}}); err != nil {
			return err
		}
		if err := f.emit(partEvent{f.next("response.content_part.done"), id, at, 0, newOutputText(text)}); err != nil {
			return err
		}
		item = f.rc.message(f.rc.status(), text)
	case itemCall:
		if err := f.emit(argsDoneEvent{f.next("response.function_call_arguments.done"), f.rc.callID(f.call), at, text}); err != nil {
			return err
		}
		item = f.rc.functionCall(f.call, "completed", text)
	}
	f.open = itemNone
	f.text.Reset()
	f.items = append(f.items, item)
	return f.emit(itemEvent{f.next("response.output_item.done"), at, item})
}

// finish closes the last item; an answer with no content still gets its
// (empty) message.
func (f *responsesStream) finish() error {
	if f.open == itemNone && len(f.items) == 0 {
		if err := f.openMessage(); err != nil {
			return err
		}
	}
	return f.closeItem()
}

func (f *responsesStream) done() {
	status := f.rc.status()
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	f.emit(responseEvent{f.next(typ), f.rc.object(status, f.items, true)})
}

func (f *responsesStream) fail(msg string) {
	o := f.rc.object("failed", f.items, false)
	o.Error = &responseError{Code: "server_error", Message: msg}
	f.emit(responseEvent{f.next("response.failed"), o})
}
