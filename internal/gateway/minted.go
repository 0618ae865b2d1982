package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/keys"
	"github.com/redis/go-redis/v9"
)

// mintedClients are the clients of the keys minted at runtime, built from
// one snapshot of the key store. A change (here or on another replica)
// builds a new set; a request keeps the client it was let in with.
type mintedClients struct {
	snap *keys.Snapshot
	byID map[string]*client
	rev  map[string]int // each client's record revision
}

// openKeys opens the store of minted keys: the fleet's in Redis, else
// keys.file; with neither, keys cannot be minted (s.keys stays nil).
func (s *Server) openKeys(cfg *config.Config) error {
	o := keys.Options{File: cfg.Keys.File, Poll: cfg.Keys.Poll, Clock: s.opts.Clock, OnChange: s.mintedChanged}
	if rdb, ok := s.rdb.(redis.UniversalClient); ok && s.fleet != nil {
		o.Redis, o.Prefix, o.File = rdb, cfg.Fleet.Prefix, ""
	}
	if o.Redis == nil && o.File == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := keys.Open(ctx, o)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	s.keys = st
	return nil
}

// mintedChanged builds the clients of a new snapshot. A record unchanged
// keeps its client; a changed one keeps its spending, and its pacer if its
// limits are the same.
func (s *Server) mintedChanged(snap *keys.Snapshot) {
	prev := s.minted.Load()
	next := &mintedClients{snap: snap, byID: map[string]*client{}, rev: map[string]int{}}
	for _, r := range snap.List() {
		var was *client
		if prev != nil {
			if was = prev.byID[r.ID]; was != nil && prev.rev[r.ID] == r.Rev {
				next.byID[r.ID], next.rev[r.ID] = was, r.Rev
				continue
			}
		}
		c, err := s.newClient(clientOf(r), was)
		if err != nil {
			s.log.Error("minted key not usable", "key", r.ID, "error", err.Error())
			continue
		}
		next.byID[r.ID], next.rev[r.ID] = &c, r.Rev
	}
	if prev != nil && s.fleet != nil {
		for id, c := range prev.byID {
			if next.byID[id] == nil && c.pacer != nil {
				s.fleet.UnshareLimits("client:" + c.name)
			}
		}
	}
	s.minted.Store(next)
}

// clientOf is a minted key's settings as a clients: entry, without a key:
// it is looked up by its hash.
func clientOf(r keys.Record) config.Client {
	return config.Client{Name: r.Name, Weight: r.Weight, Models: r.Models,
		Limits: config.Limits{RPM: r.Limits.RPM, TPM: r.Limits.TPM},
		Budget: config.Budget{Daily: r.Budget.Daily, Monthly: r.Budget.Monthly}}
}

// mintedClient returns the client of a minted token, or nil: a minted key
// whose name a configured client has is shadowed by it.
func (s *Server) mintedClient(st *state, token string) *client {
	m := s.minted.Load()
	if m == nil {
		return nil
	}
	r := m.snap.Lookup(token)
	if r == nil {
		return nil
	}
	for i := range st.clients {
		if st.clients[i].name == r.Name {
			return nil // the configuration's client wins
		}
	}
	return m.byID[r.ID]
}

// sealed reports whether keys were ever minted: the gateway is then never
// open, even when the last of them is revoked.
func (s *Server) sealed() bool {
	m := s.minted.Load()
	return m != nil && m.snap.Sealed()
}
