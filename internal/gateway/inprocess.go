package gateway

import (
	"context"
	"net/http"
)

// Code in the same process (the batch engine, the jobs API) sends the
// gateway requests on a client's behalf without holding the client's key:
// the client is named in the request's context, which nothing outside the
// process can set.

// clientKey is the context key of WithClient.
type clientKey struct{}

// WithClient returns ctx naming the client a request is served for: a
// request with it is that client's (its models, limits and budget) as if
// it had sent the client's key. A name the configuration does not know
// is refused with a 401 as a wrong key is. With no clients configured the
// gateway is open and the name is ignored.
func WithClient(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, clientKey{}, name)
}

// inProcessClient returns the client r's context names, and whether it
// names one at all.
func (st *state) inProcessClient(r *http.Request) (*client, bool) {
	name, ok := r.Context().Value(clientKey{}).(string)
	if !ok {
		return nil, false
	}
	return st.clientNamed(name), true
}

// Identify authenticates r as the gateway's own routes do, for handlers
// served beside them: it returns the caller's client name ("" when the
// gateway is open), or false after writing a 401 in the API's shape.
func (s *Server) Identify(w http.ResponseWriter, r *http.Request) (client string, ok bool) {
	c, ok := s.authenticate(s.state(), w, r)
	if !ok || c == nil {
		return "", ok
	}
	return c.name, true
}
