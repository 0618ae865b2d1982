package gateway

import (
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// startBatches serves OpenAI's Files and Batch APIs (batch: {dir: …}):
// each batch runs in the background through this gateway's own handler,
// in the process, as the client that created it, so its lines get the
// same ladders, breakers, limits, budgets and cost as that client's own
// requests. Like the job aliases, the section is read at start. With
// fleet state, batch objects are the fleet's (any replica answers for
// any batch); files, runs and cancels stay with the replica that holds
// them.
func (s *Server) startBatches(cfg *config.Config) error {
	b := cfg.Batch
	if b.Dir == "" {
		return nil
	}
	var store batchapi.Store
	if s.fleet != nil { // every replica answers for every batch
		local, err := batchapi.DirStore(b.Dir)
		if err != nil {
			return err
		}
		store = s.fleet.BatchStore(local)
	}
	api, err := batchapi.New(batchapi.Options{Store: store,
		Dir: b.Dir, MaxFileBytes: int64(b.MaxFileBytes), MaxFiles: b.MaxFiles, MaxOwnerBytes: int64(b.MaxClientBytes),
		MaxInProgress: b.MaxInProgress, Concurrency: b.Concurrency, LineDeadline: b.LineDeadline,
		Clock: s.opts.Clock, Logger: s.log, Identify: s.Identify, Serve: s.serveAs,
	})
	if err != nil {
		return err
	}
	s.batches = api
	api.Register(s.mux)
	return nil
}

// serveAs returns the handler a batch's lines go through and what makes
// each line owner's: the client named in the request's context (never
// its key, which the batch does not hold). An open gateway's owner is "".
func (s *Server) serveAs(owner string) (http.Handler, func(*http.Request)) {
	return s.Handler(), func(r *http.Request) {
		if owner != "" {
			*r = *r.WithContext(WithClient(r.Context(), owner))
		}
	}
}
