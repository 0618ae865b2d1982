package batchapi

import (
	"cmp"
	"net/http"
	"slices"
)

// handleListFiles answers GET /v1/files: the key's own files, newest
// first (order=asc: oldest first), limit per page (1 to 10,000; default
// 10,000, as OpenAI's), after a file id, of one purpose if asked.
func (a *API) handleListFiles(w http.ResponseWriter, r *http.Request) {
	owner, ok := a.o.Identify(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit, ok := pageLimit(w, q, 10_000, 10_000)
	if !ok {
		return
	}
	order := cmp.Or(q.Get("order"), "desc")
	if order != "asc" && order != "desc" {
		badRequest(w, "invalid_order", "order", "order must be asc or desc.")
		return
	}
	writePage(w, q, a.files.list(owner, q.Get("purpose"), order == "asc"), limit,
		func(f File) string { return f.ID }, File.public, "files")
}

// list returns owner's files of purpose ("": any), newest first or, with
// oldest, oldest first.
func (x *fileIndex) list(owner, purpose string, oldest bool) []File {
	x.mu.Lock()
	var fs []File
	for _, f := range x.byID {
		if f.Owner == owner && (purpose == "" || f.Purpose == purpose) {
			fs = append(fs, f)
		}
	}
	x.mu.Unlock()
	slices.SortFunc(fs, func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if !oldest {
		slices.Reverse(fs)
	}
	return fs
}
