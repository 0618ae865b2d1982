package batchapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// handleUpload takes a multipart upload (purpose, file) as the SDKs send
// it, streaming the file to disk under the size limit. Its room in the
// key's limits is held from before the first byte until it is registered
// or refused (a client that leaves mid-upload gives it back).
func (a *API) handleUpload(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	hold, u := a.files.hold(owner, a.o.MaxFiles, a.o.MaxOwnerBytes)
	if hold == nil {
		writeError(w, http.StatusTooManyRequests, "invalid_request_error", "file_limit_exceeded", "", a.full(u))
		return
	}
	defer hold.release() // once registered, a no-op
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		badRequest(w, "invalid_content_type", "", "Upload a file as multipart/form-data with the fields purpose and file.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.o.MaxFileBytes+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		badRequest(w, "invalid_multipart", "", "The body is not valid multipart/form-data: "+err.Error())
		return
	}
	id := newID("file-")
	tmp := filepath.Join(a.o.Dir, "files", id+".tmp")
	defer os.Remove(tmp) // after the rename, a no-op
	up, status, msg := a.readUpload(mr, tmp)
	if status != 0 {
		writeError(w, status, "invalid_request_error", up.code, up.param, msg)
		return
	}
	if !hold.grow(up.bytes, a.o.MaxOwnerBytes) {
		writeError(w, http.StatusTooManyRequests, "invalid_request_error", "file_limit_exceeded", "",
			"This file would take this key past its max_client_bytes of "+strconv.FormatInt(a.o.MaxOwnerBytes, 10)+
				" bytes of files (uploads, batch outputs and what running batches have written).")
		return
	}
	now := a.clk.Now()
	f := File{ID: id, Object: "file", Bytes: up.bytes, CreatedAt: now.Unix(), Created: now.UnixNano(), Filename: up.name,
		Purpose: "batch", Status: "processed", Owner: owner, Path: filepath.Join("files", id)}
	if err := os.Rename(tmp, a.files.path(f)); err != nil {
		internal(w, a.log, err)
		return
	}
	if err := a.files.addHeld(f, hold); err != nil {
		os.Remove(a.files.path(f))
		internal(w, a.log, err)
		return
	}
	writeJSON(w, f.public())
}

// full says why an owner holding u has no room for an upload.
func (a *API) full(u usage) string {
	if u.files >= a.o.MaxFiles {
		return "This key holds " + strconv.Itoa(u.files) + " files, its max_files of " + strconv.Itoa(a.o.MaxFiles) +
			" (uploads, batch outputs, and two for each batch running); delete some first."
	}
	return "This key holds " + strconv.FormatInt(u.bytes, 10) + " bytes of files, its max_client_bytes of " +
		strconv.FormatInt(a.o.MaxOwnerBytes, 10) + " (uploads, batch outputs and what running batches have written); delete some first."
}

// upload is what readUpload found, or what was wrong.
type upload struct {
	name        string
	bytes       int64
	code, param string
}

// readUpload reads the parts: purpose (which must be "batch") and one
// file, written to tmp. A status other than 0 is the refusal to send.
func (a *API) readUpload(mr *multipart.Reader, tmp string) (upload, int, string) {
	var up upload
	purpose, gotFile := "", false
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return a.uploadError(err, "invalid_multipart", "")
		}
		switch p.FormName() {
		case "purpose":
			b, err := io.ReadAll(io.LimitReader(p, 64))
			if err != nil {
				return a.uploadError(err, "invalid_multipart", "purpose")
			}
			purpose = strings.TrimSpace(string(b))
		case "file":
			if gotFile {
				up.code, up.param = "invalid_multipart", "file"
				return up, http.StatusBadRequest, "Send one file per upload."
			}
			gotFile = true
			up.name = filepath.Base(p.FileName())
			if up.bytes, err = a.saveFile(p, tmp); err != nil {
				return a.uploadError(err, "invalid_multipart", "file")
			}
		}
		p.Close()
	}
	switch {
	case !gotFile:
		up.code, up.param = "missing_file", "file"
		return up, http.StatusBadRequest, "The upload has no file part."
	case purpose != "batch":
		up.code, up.param = "invalid_purpose", "purpose"
		return up, http.StatusBadRequest, "purpose " + strconv.Quote(purpose) + " is not supported here; Fusebox keeps files for purpose \"batch\"."
	case up.bytes == 0:
		up.code, up.param = "empty_file", "file"
		return up, http.StatusBadRequest, "The file is empty."
	}
	return up, 0, ""
}

// uploadError turns a read error into a refusal: 413 past the size limit.
func (a *API) uploadError(err error, code, param string) (upload, int, string) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return upload{code: "file_too_large", param: "file"}, http.StatusRequestEntityTooLarge,
			"The file is larger than the limit of " + strconv.FormatInt(a.o.MaxFileBytes, 10) + " bytes."
	}
	return upload{code: code, param: param}, http.StatusBadRequest, "The upload could not be read: " + err.Error()
}

// saveFile writes the part to path, synced, and returns its length.
func (a *API) saveFile(r io.Reader, path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil && n > a.o.MaxFileBytes {
		err = &http.MaxBytesError{Limit: a.o.MaxFileBytes}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func (a *API) handleFile(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	f, ok := a.files.get(owner, r.PathValue("id"))
	if !ok {
		notFound(w, "file", r.PathValue("id"))
		return
	}
	writeJSON(w, f.public())
}

func (a *API) handleContent(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	f, ok := a.files.get(owner, r.PathValue("id"))
	if !ok {
		notFound(w, "file", r.PathValue("id"))
		return
	}
	file, err := os.Open(a.files.path(f))
	if err != nil {
		internal(w, a.log, err)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", a.clk.Now(), file)
}

func (a *API) handleDeleteFile(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, ok := a.files.get(owner, id); !ok {
		notFound(w, "file", id)
		return
	}
	if b := a.runningOn(id); b != "" {
		writeError(w, http.StatusConflict, "invalid_request_error", "file_in_use", "",
			"The file is the input of batch "+b+", which is still running; cancel it first.")
		return
	}
	found, err := a.files.remove(owner, id)
	switch {
	case err != nil:
		internal(w, a.log, err)
	case !found:
		notFound(w, "file", id)
	default:
		writeJSON(w, map[string]any{"id": id, "object": "file", "deleted": true})
	}
}
