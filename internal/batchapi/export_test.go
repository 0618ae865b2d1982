package batchapi

// FileCount is how many file objects a holds, for the tests outside the
// package (which import the gateway, which imports this package).
func FileCount(a *API) int {
	a.files.mu.Lock()
	defer a.files.mu.Unlock()
	return len(a.files.byID)
}
