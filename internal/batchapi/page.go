package batchapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// pageLimit reads a list request's limit: 1 to most, def when absent.
// false when it refused the request (a 400 naming limit).
func pageLimit(w http.ResponseWriter, q url.Values, def, most int) (int, bool) {
	s := q.Get("limit")
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > most {
		badRequest(w, "invalid_limit", "limit", "limit must be a whole number from 1 to "+strconv.Itoa(most)+".")
		return 0, false
	}
	return n, true
}

// writePage answers a list request with the page of all (in the order
// listed) that follows the query's after, of up to limit objects, each as
// show makes it, in OpenAI's list shape. An after that is not the id of
// one of all is a 400 naming what (the objects listed: "batches").
func writePage[T any](w http.ResponseWriter, q url.Values, all []T, limit int, id func(T) string, show func(T) T, what string) {
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(all, func(v T) bool { return id(v) == after })
		if i < 0 {
			badRequest(w, "invalid_after", "after", "after must be the id of one of your "+what+".")
			return
		}
		all = all[i+1:]
	}
	page := all[:min(limit, len(all))]
	out := struct {
		Object  string  `json:"object"`
		Data    []T     `json:"data"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
		HasMore bool    `json:"has_more"`
	}{Object: "list", Data: make([]T, len(page)), HasMore: len(all) > len(page)}
	for i, v := range page {
		out.Data[i] = show(v)
	}
	if len(page) > 0 {
		first, last := id(page[0]), id(page[len(page)-1])
		out.FirstID, out.LastID = &first, &last
	}
	writeJSON(w, out)
}
