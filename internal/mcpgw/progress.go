package mcpgw

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressMap passes upstream progress notifications through to the
// clients that asked for them. A call with a progress token goes upstream
// with a token of the gateway's own, unique across every client (theirs
// may collide); a notification with that token is sent to the client's
// session with the client's token. It is safe for concurrent use.
type progressMap struct {
	next atomic.Uint64
	// calls maps a gateway token to its waiting call.
	calls sync.Map
}

// progressCall is a call waiting for progress: the client's session, the
// token it chose, and the context of its handler, which the SDK needs to
// send the notification on that request's stream (Streamable HTTP).
type progressCall struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
}

// add registers a call of session with the client's token, and returns
// the token to send upstream.
func (m *progressMap) add(ctx context.Context, session *mcp.ServerSession, token any) string {
	id := "fusebox-" + strconv.FormatUint(m.next.Add(1), 10)
	m.calls.Store(id, progressCall{ctx, session, token})
	return id
}

// remove forgets a call once answered: later notifications are dropped.
func (m *progressMap) remove(id string) { m.calls.Delete(id) }

// relay passes an upstream progress notification to its client.
func (m *progressMap) relay(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	id, _ := req.Params.ProgressToken.(string)
	v, ok := m.calls.Load(id)
	if !ok || id == "" {
		return // not ours, or the call was answered
	}
	pc := v.(progressCall)
	p := *req.Params
	p.ProgressToken = pc.token
	pc.session.NotifyProgress(pc.ctx, &p)
}
