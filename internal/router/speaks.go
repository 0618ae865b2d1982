package router

// SpeaksMessages reports whether t's upstream takes Anthropic Messages
// bodies for its model: a continuation it is sent goes as a prefill of
// the assistant's message, which it continues itself.
func (t *Target) SpeaksMessages() bool {
	ms, ok := t.prov.up.(messagesSpeaker)
	return ok && ms.SpeaksMessages(t.Model)
}
