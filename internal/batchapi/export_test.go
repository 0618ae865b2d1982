package batchapi

// FileCount is how many file objects a holds, for the tests outside the
// package (which import the gateway, which imports this package).
func FileCount(a *API) int {
	a.files.mu.Lock()
	defer a.files.mu.Unlock()
	return len(a.files.byID)
}

// RunState reports whether a runs batch id, and whether it knows the
// batch was adopted elsewhere.
func RunState(a *API, id string) (running, lost bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rn := a.runs[id]
	return rn != nil, rn != nil && rn.lost
}

// OwnerFiles is how many files owner's limits count, uploads still
// arriving included.
func OwnerFiles(a *API, owner string) int {
	a.files.mu.Lock()
	defer a.files.mu.Unlock()
	return a.files.use[owner].files
}

// OwnerBytes is how many bytes owner's limits count, uploads still
// arriving and running batches' outputs included.
func OwnerBytes(a *API, owner string) int64 {
	a.files.mu.Lock()
	defer a.files.mu.Unlock()
	return a.files.use[owner].bytes
}

// OutputID is the id batch id's output (kind "output") or error file
// ("error") is registered under.
func OutputID(id, kind string) string { return outputID(id, kind) }
