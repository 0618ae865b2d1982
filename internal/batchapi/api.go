package batchapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/apierror"
)

// Options configure an API. Zero values are the documented defaults.
type Options struct {
	// Dir is the data directory: files/ and batches/ under it. Required.
	Dir string
	// MaxFileBytes is the largest upload. 0: 200 MiB (OpenAI's limit).
	MaxFileBytes int64
	// MaxFiles is how many files an owner may keep: uploads, and two
	// for each batch's outputs from its creation until it ends (then
	// those it produced). 0: 500.
	MaxFiles int
	// MaxOwnerBytes is how many bytes of files an owner may keep:
	// uploads, and batch outputs as they are written (a batch that
	// reaches it stops with storage_limit). 0: 10 GiB.
	MaxOwnerBytes int64
	// MaxInProgress is how many batches an owner may have running at once.
	// 0: 10.
	MaxInProgress int
	// Concurrency is the most lines of one batch in flight. 0: 32.
	Concurrency int
	// LineDeadline is how long a line is retried through outages. 0: 1h.
	LineDeadline time.Duration
	// Identify returns the caller's owner name (its client key's name),
	// or writes the refusal itself (a 401 in OpenAI's shape) and returns
	// false. Required.
	Identify func(w http.ResponseWriter, r *http.Request) (owner string, ok bool)
	// Serve returns the handler that serves owner's lines and what
	// prepares each line's request to be served as owner. Required.
	Serve func(owner string) (http.Handler, func(*http.Request))
	// Store keeps the batch objects. nil: Dir/batches.
	Store Store
	// Clock tells the time of the objects and the expiries. nil: the
	// system clock.
	Clock clock.Clock
	// Logger receives what happens to batches. nil: slog.Default().
	Logger *slog.Logger
}

// API serves the Files and Batch APIs. It is safe for concurrent use.
type API struct {
	o     Options
	clk   clock.Clock
	log   *slog.Logger
	store Store
	files *fileIndex

	// ctx ends the background runs at Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// storeMu serialises each read-modify-write of a batch in the store.
	storeMu sync.Mutex
	// mu guards runs, closed and each run's flags.
	mu     sync.Mutex
	runs   map[string]*run // the batches this process is running, by id
	closed bool
}

// New opens the data directory and resumes the batches that were in
// progress there.
func New(o Options) (*API, error) {
	switch {
	case o.Dir == "":
		return nil, errors.New("batchapi: Options.Dir is empty")
	case o.Identify == nil || o.Serve == nil:
		return nil, errors.New("batchapi: Options.Identify and Options.Serve are required")
	case o.MaxFileBytes < 0, o.MaxFiles < 0, o.MaxOwnerBytes < 0, o.MaxInProgress < 0, o.Concurrency < 0, o.LineDeadline < 0:
		return nil, errors.New("batchapi: an option is negative")
	}
	o.MaxFileBytes = or64(o.MaxFileBytes, 200<<20)
	o.MaxOwnerBytes = or64(o.MaxOwnerBytes, 10<<30)
	o.MaxFiles = int(or64(int64(o.MaxFiles), 500))
	o.MaxInProgress = int(or64(int64(o.MaxInProgress), 10))
	o.Concurrency = int(or64(int64(o.Concurrency), 32))
	if o.LineDeadline == 0 {
		o.LineDeadline = time.Hour
	}
	a := &API{o: o, clk: clock.Or(o.Clock), log: o.Logger, store: o.Store, runs: map[string]*run{}}
	if a.log == nil {
		a.log = slog.Default()
	}
	var err error
	if a.files, err = openFileIndex(o.Dir, a.clk.Now()); err != nil {
		return nil, err
	}
	if a.store == nil {
		if a.store, err = newDirStore(filepath.Join(o.Dir, "batches")); err != nil {
			return nil, err
		}
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if err := a.resume(); err != nil {
		a.Close()
		return nil, err
	}
	if ad := a.adopter(); ad != nil {
		a.wg.Add(1)
		go a.adoptLoop(ad)
	}
	return a, nil
}

func or64(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/files", a.handleUpload)
	mux.HandleFunc("GET /v1/files", a.handleListFiles)
	mux.HandleFunc("GET /v1/files/{id}", a.handleFile)
	mux.HandleFunc("GET /v1/files/{id}/content", a.handleContent)
	mux.HandleFunc("DELETE /v1/files/{id}", a.handleDeleteFile)
	mux.HandleFunc("POST /v1/batches", a.handleCreate)
	mux.HandleFunc("GET /v1/batches/{id}", a.handleGet)
	mux.HandleFunc("GET /v1/batches", a.handleList)
	mux.HandleFunc("POST /v1/batches/{id}/cancel", a.handleCancel)
}

// Close stops the background runs, their journals flushed; lines in flight
// are left for the next New on the directory, which resumes the batches.
func (a *API) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}

// writeError writes an error in OpenAI's shape.
func writeError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	apierror.Write(w, status, typ, code, param, msg)
}

func badRequest(w http.ResponseWriter, code, param, msg string) {
	writeError(w, http.StatusBadRequest, "invalid_request_error", code, param, msg)
}

func notFound(w http.ResponseWriter, what, id string) {
	writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "", "No "+what+" with id "+strconv.Quote(id)+".")
}

func internal(w http.ResponseWriter, log *slog.Logger, err error) {
	log.Error("batch api", "error", err.Error())
	writeError(w, http.StatusInternalServerError, "server_error", "", "", "The batch store failed; try again.")
}

func writeJSON(w http.ResponseWriter, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// newID returns prefix and 24 random hex digits.
func newID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
