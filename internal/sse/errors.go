package sse

import "errors"

// ErrIncomplete is returned by Reader.Next when the stream ends inside an
// event: bytes of a field line arrived but not the blank line that ends the
// event. The WHATWG rules discard such an event; Next returns what arrived
// alongside this error, because for the gateway a stream cut mid-event is a
// failure, never a complete answer.
var ErrIncomplete = errors.New("sse: stream ended inside an event")

// ErrEventTooLarge is returned by Reader.Next when one event, counted in
// bytes as received from its first byte through the blank line that ends
// it, exceeds the Reader's MaxEventSize. The error is wrapped with the
// limit; test for it with errors.Is.
var ErrEventTooLarge = errors.New("sse: event too large")

// ErrInvalidName is returned by Writer.WriteEvent when the event name holds
// a line break, which would split it into more than one field.
var ErrInvalidName = errors.New("sse: event name contains a line break")
