package batchapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
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
	limit := 10_000
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10_000 {
			badRequest(w, "invalid_limit", "limit", "limit must be a whole number from 1 to 10000.")
			return
		}
		limit = n
	}
	order := cmp.Or(q.Get("order"), "desc")
	if order != "asc" && order != "desc" {
		badRequest(w, "invalid_order", "order", "order must be asc or desc.")
		return
	}
	all := a.files.list(owner, q.Get("purpose"), order == "asc")
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(all, func(f File) bool { return f.ID == after })
		if i < 0 {
			badRequest(w, "invalid_after", "after", "after must be the id of one of your files.")
			return
		}
		all = all[i+1:]
	}
	page := all[:min(limit, len(all))]
	out := struct {
		Object  string  `json:"object"`
		Data    []File  `json:"data"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
		HasMore bool    `json:"has_more"`
	}{Object: "list", Data: make([]File, len(page)), HasMore: len(all) > len(page)}
	for i, f := range page {
		out.Data[i] = f.public()
	}
	if len(page) > 0 {
		out.FirstID, out.LastID = &page[0].ID, &page[len(page)-1].ID
	}
	writeJSON(w, out)
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
