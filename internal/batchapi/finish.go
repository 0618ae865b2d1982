package batchapi

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/fuseboxhq/fusebox/internal/batch"
)

// finish ends a batch whose lines have stopped: its output and error
// files become file objects of its owner, and its status the end its
// course calls for: cancelled, expired, failed (the owner's budget or key
// was refused) or, through finalizing, completed.
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
			b.Errors = &BatchErrors{Object: "list", Data: []BatchError{{Code: s.Stopped, Message: s.Reason}}}
		case b.Status == StatusFinalizing:
			b.Status, b.CompletedAt = StatusCompleted, now
		}
	})
}

// outputs registers the batch's output and error files (those with
// lines) as its owner's files, once each, and returns their ids.
func (a *API) outputs(b Batch) (out, errs *string, err error) {
	p := a.paths(b.ID)
	if b.OutputFileID != nil || b.ErrorFileID != nil { // registered by an earlier finish
		return b.OutputFileID, b.ErrorFileID, nil
	}
	for _, f := range []struct {
		path, name string
		id         **string
	}{{p.Out, b.ID + "_output.jsonl", &out}, {p.Dead, b.ID + "_error.jsonl", &errs}} {
		fi, err := os.Stat(f.path)
		if err != nil || fi.Size() == 0 {
			continue
		}
		rel, _ := filepath.Rel(a.o.Dir, f.path)
		file := File{ID: newID("file-"), Object: "file", Bytes: fi.Size(), CreatedAt: a.clk.Now().Unix(), Created: a.clk.Now().UnixNano(),
			Filename: f.name, Purpose: "batch_output", Status: "processed", Owner: b.Owner, Path: rel}
		if err := a.files.add(file); err != nil {
			return nil, nil, err
		}
		*f.id = &file.ID
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
