package mcpgw

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// publish shows the client what server s offers now, catalog c: the tools
// and prompts it may use under their federated names, the resources under
// their own URIs, and takes away what s no longer offers. The SDK tells
// the client's sessions that the lists changed.
func (t *tenant) publish(s *server, c catalog) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.shown[s.cfg.Name]
	if old == nil {
		old = &shown{}
	}
	now := &shown{}
	for _, tool := range c.tools {
		name := federated(s.cfg.Name, tool.Name)
		if !t.seesTool(s.cfg.Name, name) {
			continue
		}
		ft := *tool
		ft.Name = name
		if t.add(func() { t.server.AddTool(&ft, t.callHandler(s, tool.Name)) }) {
			now.tools = append(now.tools, name)
		}
	}
	if t.seesWhole(s.cfg.Name) {
		t.publishWhole(s, c, now)
	}
	t.server.RemoveTools(missing(old.tools, now.tools)...)
	t.server.RemovePrompts(missing(old.prompts, now.prompts)...)
	t.server.RemoveResources(missing(old.resources, now.resources)...)
	t.server.RemoveResourceTemplates(missing(old.templates, now.templates)...)
	t.shown[s.cfg.Name] = now
}

// publishWhole adds server s's prompts and resources to now.
func (t *tenant) publishWhole(s *server, c catalog, now *shown) {
	for _, p := range c.prompts {
		fp := *p
		fp.Name = federated(s.cfg.Name, p.Name)
		upstream := p.Name
		if t.add(func() { t.server.AddPrompt(&fp, t.promptHandler(s, upstream)) }) {
			now.prompts = append(now.prompts, fp.Name)
		}
	}
	for _, r := range c.resources {
		if owner := t.resourceOwner(r.URI, s); owner != s {
			continue // another server offers the URI first
		}
		if t.add(func() { t.server.AddResource(r, t.resourceHandler(s)) }) {
			now.resources = append(now.resources, r.URI)
		}
	}
	for _, rt := range c.templates {
		if t.add(func() { t.server.AddResourceTemplate(rt, t.resourceHandler(s)) }) {
			now.templates = append(now.templates, rt.URITemplate)
		}
	}
}

// resourceOwner returns the first server, in configured order, whose
// catalog has uri (s when it is the first or none has it yet).
func (t *tenant) resourceOwner(uri string, s *server) *server {
	for _, o := range t.gw.servers {
		if o == s {
			return s
		}
		o.mu.Lock()
		has := false
		for _, r := range o.cat.resources {
			has = has || r.URI == uri
		}
		o.mu.Unlock()
		if has && t.seesWhole(o.cfg.Name) {
			return o
		}
	}
	return s
}

// add runs a registration, and reports false when the SDK refused what an
// upstream server offered (it panics on a malformed tool): the item is
// left out, the rest goes on.
func (t *tenant) add(register func()) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			t.gw.log.Warn("mcp: an upstream item cannot be offered", "err", p)
			ok = false
		}
	}()
	register()
	return true
}

// missing returns the names of old that are not in now.
func missing(old, now []string) []string {
	var out []string
	for _, n := range old {
		found := false
		for _, m := range now {
			found = found || m == n
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// callHandler answers the client's calls of server s's tool.
func (t *tenant) callHandler(s *server, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return t.gw.callTool(ctx, t, s, tool, req)
	}
}

// promptHandler answers the client's prompts/get of server s's prompt.
func (t *tenant) promptHandler(s *server, prompt string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		p := *req.Params
		p.Name = prompt
		var out *mcp.GetPromptResult
		err := s.do(ctx, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			out, err = cs.GetPrompt(ctx, &p)
			return err
		})
		return out, err
	}
}

// resourceHandler answers the client's resources/read of server s's
// resources.
func (t *tenant) resourceHandler(s *server) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		var out *mcp.ReadResourceResult
		err := s.do(ctx, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			out, err = cs.ReadResource(ctx, req.Params)
			return err
		})
		return out, err
	}
}
