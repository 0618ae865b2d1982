package aireq

import (
	"encoding/json"
	"strings"
	"testing"
)

// chatBody is a typical 2 KB chat completion request: a system prompt, a
// short conversation, a tool and the usual options.
var chatBody = []byte(`{"model":"gpt-4.1-mini","messages":[` +
	`{"role":"system","content":"You are a support assistant for an online bookshop. Answer in at most three sentences, cite the order number when you have one, and never promise a refund: offer to open a ticket instead. ` + strings.Repeat("Be polite and precise. ", 20) + `"},` +
	`{"role":"user","content":"Hello! My order 48151 has not arrived yet and the tracking page says \"label created\" since Monday. What can I do?"},` +
	`{"role":"assistant","content":"I am sorry about the delay. I can see order 48151 was handed to the carrier on Tuesday; the tracking page can lag by a day or two. Would you like me to open a ticket with the carrier?"},` +
	`{"role":"user","content":"Yes please, and can you tell me when it should arrive? I need it before the 14th for a birthday present. ` + strings.Repeat("Thanks a lot. ", 20) + `"}],` +
	`"tools":[{"type":"function","function":{"name":"open_ticket","description":"Open a carrier ticket for an order","parameters":{"type":"object","properties":{"order":{"type":"string"},"reason":{"type":"string"}},"required":["order"]}}}],` +
	`"tool_choice":"auto","temperature":0.3,"max_completion_tokens":512,"stream":true,"stream_options":{"include_usage":true},"user":"customer-7781"}`)

// escapedBody is chatBody with its top-level keys spelled with escapes.
var escapedBody = []byte(strings.NewReplacer(
	`"model":`, `"mod\u0065l":`,
	`"messages":`, `"m\u0065ssages":`,
	`"tools":`, `"t\u006fols":`,
	`"tool_choice":`, `"tool\u005fchoice":`,
	`"max_completion_tokens":`, `"max_completion_t\u006fkens":`,
	`"stream":`, `"str\u0065am":`,
	`"stream_options":`, `"stream_\u006fptions":`,
	`"user":`, `"\u0075ser":`,
).Replace(string(chatBody)))

func BenchmarkScan(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"small", []byte(`{"model":"gpt-4.1","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in one word."}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`)},
		{"chat2KB", chatBody},
		{"escapedKeys", escapedBody},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				Scan(bc.body)
			}
		})
	}
}

// BenchmarkScanValid is what deciding a body's fields and validity costs:
// Scan then json.Valid (two passes) beside ScanValid (one).
func BenchmarkScanValid(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{{"chat2KB", chatBody}, {"escapedKeys", escapedBody}} {
		b.Run(bc.name+"/Scan+json.Valid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if !Scan(bc.body).Object || !json.Valid(bc.body) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(bc.name+"/ScanValid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if !ScanValid(bc.body).Valid {
					b.Fatal("invalid")
				}
			}
		})
	}
}
