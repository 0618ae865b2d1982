package batchapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batch"
)

// maxCreateBody bounds a POST /v1/batches body.
const maxCreateBody = 64 << 10

// handleCreate starts a batch of an uploaded file, once it holds room
// for its outputs in its owner's limits (batchroom.go).
func (a *API) handleCreate(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCreateBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "",
			"The body is larger than "+strconv.Itoa(maxCreateBody)+" bytes, or could not be read.")
		return
	}
	b, param, msg := a.newBatch(owner, body)
	if msg != "" {
		badRequest(w, "invalid_request", param, msg)
		return
	}
	if u, ok := a.files.holdBatch(b.ID, owner, a.o.MaxFiles, a.o.MaxOwnerBytes); !ok {
		badRequest(w, "file_limit_exceeded", "", a.noRoom(u))
		return
	}
	if !a.admit(b) {
		a.files.settleBatch(b.ID, nil)
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "batch_limit_exceeded", "",
			"This key has "+strconv.Itoa(a.o.MaxInProgress)+" batches in progress, as many as it may; wait for one to end or cancel one.")
		return
	}
	writeJSON(w, b.public())
}

// noRoom says why an owner holding u has no room for a batch's outputs.
func (a *API) noRoom(u usage) string {
	if u.bytes >= a.o.MaxOwnerBytes {
		return "This key holds " + strconv.FormatInt(u.bytes, 10) + " bytes of files, its max_client_bytes of " +
			strconv.FormatInt(a.o.MaxOwnerBytes, 10) + " (uploads, batch outputs and what running batches have written): a batch would have no room for its output. Delete some files first."
	}
	return "A batch holds 2 of this key's max_files (" + strconv.Itoa(a.o.MaxFiles) + ") for its output and error files until it ends; this key holds " +
		strconv.Itoa(u.files) + " (uploads, batch outputs and the batches running), leaving " + strconv.Itoa(max(a.o.MaxFiles-u.files, 0)) +
		" free. Delete some files first."
}

// newBatch checks a create body and returns the new batch, or the param
// at fault and why.
func (a *API) newBatch(owner string, body []byte) (Batch, string, string) {
	m, problem := members(body, []string{"input_file_id", "endpoint", "completion_window", "metadata", "output_expires_after"})
	if problem != "" {
		return Batch{}, "", problem + "."
	}
	var in, endpoint, window string
	if json.Unmarshal(m["input_file_id"], &in) != nil || in == "" {
		return Batch{}, "input_file_id", "input_file_id must be the id of a file uploaded with purpose \"batch\"."
	}
	f, ok := a.files.get(owner, in)
	if !ok || f.Purpose != "batch" {
		return Batch{}, "input_file_id", "No file with id " + quote(in) + " and purpose \"batch\"."
	}
	if json.Unmarshal(m["endpoint"], &endpoint) != nil || !slices.Contains(batch.Endpoints, endpoint) {
		return Batch{}, "endpoint", "endpoint must be one of /v1/chat/completions, /v1/embeddings, /v1/messages."
	}
	if json.Unmarshal(m["completion_window"], &window) != nil || window != "24h" {
		return Batch{}, "completion_window", "completion_window must be \"24h\"."
	}
	meta, msg := metadata(m["metadata"])
	if msg != "" {
		return Batch{}, "metadata", msg
	}
	now := a.clk.Now()
	return Batch{ID: newID("batch_"), Object: "batch", Endpoint: endpoint, InputFileID: in, CompletionWindow: window,
		Status: StatusValidating, CreatedAt: now.Unix(), CreatedNs: now.UnixNano(),
		ExpiresAt: at(now.Add(24 * time.Hour).Unix()), Metadata: meta, Owner: owner}, "", ""
}

// metadata reads up to 16 string pairs (keys to 64 bytes, values to 512).
func metadata(raw json.RawMessage) (map[string]string, string) {
	if raw == nil || string(raw) == "null" {
		return nil, ""
	}
	const msg = "metadata must be an object of at most 16 string values, keys up to 64 bytes, values up to 512."
	keys, problem := members(raw, nil)
	if problem != "" || len(keys) > 16 {
		return nil, msg
	}
	out := map[string]string{}
	for k, v := range keys {
		var s string
		if json.Unmarshal(v, &s) != nil || len(k) > 64 || len(s) > 512 {
			return nil, msg
		}
		out[k] = s
	}
	return out, ""
}

func (a *API) handleGet(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	b, ok, err := a.batchOf(owner, r.PathValue("id"))
	switch {
	case err != nil:
		internal(w, a.log, err)
	case !ok:
		notFound(w, "batch", r.PathValue("id"))
	default:
		writeJSON(w, a.live(b).public())
	}
}

// batchOf returns owner's batch id.
func (a *API) batchOf(owner, id string) (Batch, bool, error) {
	b, ok, err := a.store.Get(id)
	if err != nil || !ok || b.Owner != owner {
		return Batch{}, false, err
	}
	return b, true, nil
}

// handleList lists the caller's batches, newest first, a page at a time:
// limit (1 to 100, default 20) after the batch whose id is after.
func (a *API) handleList(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit, ok := pageLimit(w, q, 20, 100)
	if !ok {
		return
	}
	all, err := a.store.List(owner)
	if err != nil {
		internal(w, a.log, err)
		return
	}
	writePage(w, q, all, limit, func(b Batch) string { return b.ID },
		func(b Batch) Batch { return a.live(b).public() }, "batches")
}

func (a *API) handleCancel(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	b, ok, err := a.batchOf(owner, r.PathValue("id"))
	switch {
	case err != nil:
		internal(w, a.log, err)
		return
	case !ok:
		notFound(w, "batch", r.PathValue("id"))
		return
	}
	if ad := a.adopter(); ad != nil && active(b.Status) && !ad.Holds(b.ID) {
		a.adoptBatch(ad, b.ID) // its replica stopped: the cancel is this one's
	}
	b, err = a.cancelBatch(b)
	if errors.Is(err, ErrElsewhere) {
		writeError(w, http.StatusConflict, "invalid_request_error", "batch_elsewhere", "",
			"Batch "+b.ID+" runs on another replica of the gateway, which holds its files: only that replica can cancel it. Try again (a load balancer may reach it), or wait for it to end.")
		return
	}
	if err != nil {
		internal(w, a.log, err)
		return
	}
	writeJSON(w, a.live(b).public())
}
