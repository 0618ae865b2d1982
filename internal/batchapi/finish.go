package batchapi

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/batch"
)

// finish ends a batch whose lines have stopped: its output and error
// files become file objects of its owner, and its status the end its
// course calls for: cancelled, expired, failed (the owner's budget, key
// or max_client_bytes stopped it, or the run failed) or, through
// finalizing, completed.
func (a *API) finish(id string, rn *run, s batch.Summary) (Batch, error) {
	a.mu.Lock()
	expired := rn.expired
	a.mu.Unlock()
	b, err := a.update(id, func(b *Batch) {
		if b.Status == StatusInProgress && !expired && s.Stopped == "" {
			b.Status, b.FinalizingAt = StatusFinalizing, at(a.clk.Now().Unix())
		}
	})
	if err != nil {
		return b, err
	}
	out, errs, err := a.outputs(b)
	if err != nil {
		return b, err
	}
	return a.update(id, func(b *Batch) {
		now := at(a.clk.Now().Unix())
		b.OutputFileID, b.ErrorFileID = out, errs
		if s.BatchID != "" {
			b.RequestCounts.Completed, b.RequestCounts.Failed, b.Cost = s.TotalOK, s.TotalDead, s.Cost
		}
		switch {
		case b.Status == StatusCancelling:
			b.Status, b.CancelledAt = StatusCancelled, now
		case expired:
			b.Status, b.ExpiredAt = StatusExpired, now
		case s.Stopped != "" && b.Status == StatusInProgress:
			b.Status, b.FailedAt = StatusFailed, now
			b.Errors = &BatchErrors{Object: "list", Data: []BatchError{{Code: s.Stopped, Message: a.stopMessage(s)}}}
		case b.Status == StatusFinalizing:
			b.Status, b.CompletedAt = StatusCompleted, now
		}
	})
}

// stopMessage says why a batch's lines stopped.
func (a *API) stopMessage(s batch.Summary) string {
	if s.Stopped != batch.StoppedStorage {
		return s.Reason
	}
	return "The batch's output and error files reached this key's max_client_bytes (" + strconv.FormatInt(a.o.MaxOwnerBytes, 10) +
		" bytes of files, uploads and batch outputs together): the lines in them are kept; delete files and run the others in a new batch."
}

// outputs registers the batch's output and error files (those with
// lines) as its owner's files, in place of the room the batch held for
// them, and returns their ids. Their ids are the batch's (outputID), so
// registering them again after a crash replaces them.
func (a *API) outputs(b Batch) (out, errs *string, err error) {
	if b.OutputFileID != nil || b.ErrorFileID != nil { // registered by an earlier finish
		return b.OutputFileID, b.ErrorFileID, nil
	}
	var files []File
	for _, o := range a.outputPaths(b) {
		fi, err := os.Stat(o.path)
		if err != nil || fi.Size() == 0 {
			continue
		}
		rel, _ := filepath.Rel(a.o.Dir, o.path)
		now := a.clk.Now()
		f := File{ID: outputID(b.ID, o.kind), Object: "file", Bytes: fi.Size(), CreatedAt: now.Unix(), Created: now.UnixNano(),
			Filename: o.name, Purpose: "batch_output", Status: "processed", Owner: b.Owner, Path: rel}
		files = append(files, f)
		if o.kind == "output" {
			out = &f.ID
		} else {
			errs = &f.ID
		}
	}
	if err := a.files.register(b.ID, files); err != nil {
		return nil, nil, err
	}
	return out, errs, nil
}

// countLines counts the non-blank lines of a file.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var n int64
	nonBlank := false
	for {
		chunk, err := r.ReadSlice('\n')
		nonBlank = nonBlank || len(bytes.TrimSpace(chunk)) > 0
		if err == bufio.ErrBufferFull {
			continue
		}
		if nonBlank && (err == nil || err == io.EOF) {
			n++
		}
		nonBlank = false
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil:
			return 0, err
		}
	}
}
