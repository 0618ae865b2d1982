package config

import "time"

// KeyStore keeps the client keys minted at runtime through the admin API
// (POST /fusebox/keys, fusebox keys). Each is stored as its SHA-256,
// never retrievable after minting. With state: redis://… they live in
// Redis and every replica honours a key minted or revoked on another
// within a second; with state: memory they live in file. Keys in the
// configuration's clients: still work, and win over a minted key of the
// same name. For example:
//
//	keys: {file: /var/lib/fusebox/keys.json}
type KeyStore struct {
	// File is the JSON file the minted keys are kept in with state:
	// memory (written atomically, mode 0600). "": with state: memory,
	// keys cannot be minted; in a fleet it is not used.
	File string `yaml:"file"`
	// Poll is how often a fleet's replica checks for changes whose
	// message it may have missed. 0: 500ms. At most 1s.
	Poll time.Duration `yaml:"poll"`
}

// RequestLog keeps each request's metadata in a bounded SQLite file,
// queried with GET /fusebox/requests (admin token) and the dashboard's
// request view: time, client, alias, the targets tried with their
// verdicts, status, outcome, latency, time to first byte, tokens, cost,
// idempotency key, trace id. Never a prompt or an answer, unless
// log_content is on. Records are written off the request path in
// batches; when the writer falls behind they are dropped and counted
// (fusebox_request_log_dropped_total), never waited for. Each replica
// keeps its own. For example:
//
//	request_log: {path: /var/lib/fusebox/requests.db, max_rows: 1000000, max_age: 168h}
type RequestLog struct {
	// Path is the SQLite file. "": the request log is off.
	Path string `yaml:"path"`
	// MaxRows bounds the requests kept; past it the oldest go.
	// 0: 1000000.
	MaxRows int `yaml:"max_rows"`
	// MaxBytes bounds the size of the data kept, in bytes; past it the
	// oldest go. 0: no bound but max_rows.
	MaxBytes int `yaml:"max_bytes"`
	// MaxAge is how long a request is kept. 0: 168h (7 days).
	MaxAge time.Duration `yaml:"max_age"`
	// Queue is how many records may wait for the writer; past it new
	// ones are dropped. 0: 8192.
	Queue int `yaml:"queue"`
	// LogContent keeps each request's body and its answer (when not
	// streamed), up to 64 KiB each. Off: never.
	LogContent bool `yaml:"log_content"`
}
