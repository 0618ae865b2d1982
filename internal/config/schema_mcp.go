package config

import "time"

// MCP is the gateway's Model Context Protocol endpoint, /mcp: it federates
// the configured MCP servers into one, each server's tools, prompts and
// resources behind the same client keys as the models, with a breaker,
// deadlines and failover per server. docs/MCP.md has the rules. For
// example:
//
//	mcp:
//	  servers:
//	    - name: search
//	      replicas: [http://10.0.0.5:9000/mcp, http://10.0.0.6:9000/mcp]
//	      headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
//	      timeouts: {total: 5s}
//	    - name: files
//	      command: [mcp-server-filesystem, /srv/data]
//	      tools: {write_file: {retry: "no", timeouts: {total: 30s}}}
type MCP struct {
	// Servers are the upstream MCP servers. Their tools and prompts are
	// named server__name at /mcp. Default: none, /mcp is off.
	Servers []MCPServer `yaml:"servers"`
	// MaxBodyBytes bounds one JSON-RPC message a client sends (a
	// tools/call's arguments included); a larger one is refused with 413.
	// Default: 1 MiB.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// SessionIdle closes a client's session after this long without a
	// request. Default: 30m.
	SessionIdle time.Duration `yaml:"session_idle"`
}

// MCPTransport is how the gateway reaches an MCP server.
type MCPTransport string

// The MCP transports.
const (
	// MCPStreamable is the Streamable HTTP transport (MCP 2025-03-26 on).
	MCPStreamable MCPTransport = "http"
	// MCPSSE is the older HTTP+SSE transport (MCP 2024-11-05).
	MCPSSE MCPTransport = "sse"
	// MCPStdio is a subprocess that the gateway starts and supervises,
	// speaking newline-delimited JSON-RPC on its stdin and stdout.
	MCPStdio MCPTransport = "stdio"
)

// mcpTransports are the known MCP transports, in the order messages list
// them.
var mcpTransports = []MCPTransport{MCPStreamable, MCPSSE, MCPStdio}

// MCPServer is one upstream MCP server, reached over HTTP at url (or at
// any of its replicas) or started as command.
type MCPServer struct {
	// Name prefixes the server's tools and prompts (name__tool) and names
	// its breaker. Required, unique; letters, digits, "-" and "_", at most
	// 32 bytes, without "__".
	Name string `yaml:"name"`
	// Transport is http (Streamable HTTP), sse or stdio. Default: stdio
	// when command is set, else http.
	Transport MCPTransport `yaml:"transport"`
	// URL is the server's endpoint, for http and sse. One of url,
	// replicas or command is required.
	URL string `yaml:"url"`
	// Replicas are endpoints of copies of the same server, for http and
	// sse: calls go to the first whose breaker is closed, and a call that
	// may be repeated (see MCPTool.Retry) fails over to the next. Not with
	// url.
	Replicas []string `yaml:"replicas"`
	// Command starts a stdio server: the program and its arguments.
	Command []string `yaml:"command"`
	// Env adds variables to a stdio server's environment (its
	// credentials); clients never see them.
	Env map[string]Secret `yaml:"env"`
	// Headers are sent with every HTTP request to the server (its
	// credentials, such as Authorization); clients never see them.
	Headers map[string]Secret `yaml:"headers"`
	// Breaker is each replica's breaker, fed by outages (transport
	// errors, timeouts, JSON-RPC internal errors); a tool's own error
	// result (isError) and the caller's mistakes count as successes or
	// not at all. Unset fields come from defaults.breaker.
	Breaker Breaker `yaml:"breaker"`
	// BreakerPerTool gives each tool of each replica its own breaker, fed
	// by that tool's calls, so that one broken tool does not close the
	// others off: the replica's breaker then counts only the replica's own
	// failures (a session that cannot be opened or is lost). Default:
	// false.
	BreakerPerTool bool `yaml:"breaker_per_tool"`
	// Timeouts bound the calls to the server; a tool may override them.
	Timeouts MCPTimeouts `yaml:"timeouts"`
	// Attempts is the most replicas one call that may be repeated is sent
	// to, the first included. Default: 2 (at most the replicas there are).
	Attempts int `yaml:"attempts"`
	// Tools tune single tools, by their name on the server (without the
	// prefix).
	Tools map[string]MCPTool `yaml:"tools"`
}

// MCPTimeouts bound MCP calls, as Timeouts do for models. For example:
//
//	timeouts: {connect: 5s, total: 10s, deadline: 25s}
type MCPTimeouts struct {
	// Connect bounds starting a session with the server (the initialize
	// handshake, a stdio server's start included). Default: 10s.
	Connect time.Duration `yaml:"connect"`
	// Total bounds one attempt of a call on one replica. Default: 30s.
	Total time.Duration `yaml:"total"`
	// Deadline bounds a whole call, every attempt included. Default: 0,
	// attempts × total.
	Deadline time.Duration `yaml:"deadline"`
}

// MCPRetry says whether a tool's calls may be repeated.
type MCPRetry string

// The tool retry modes.
const (
	// MCPRetryAuto follows the server's annotations: a tool with
	// readOnlyHint or idempotentHint is repeated, any other is not.
	MCPRetryAuto MCPRetry = "auto"
	// MCPRetryYes repeats the tool's calls whatever its annotations say.
	MCPRetryYes MCPRetry = "yes"
	// MCPRetryNo never repeats them, whatever its annotations say.
	MCPRetryNo MCPRetry = "no"
)

// MCPTool tunes one tool of an MCP server.
type MCPTool struct {
	// Retry: auto (the tool's readOnlyHint or idempotentHint), yes or no.
	// A call that was never sent (its replica's breaker open, its session
	// gone before the server saw it) goes to the next replica in any mode.
	// Default: auto.
	Retry MCPRetry `yaml:"retry"`
	// Timeouts override the server's for this tool.
	Timeouts MCPTimeouts `yaml:"timeouts"`
}

// ClientMCP are a client key's rights at /mcp. With neither servers nor
// tools set the client may use every server, as a client without models
// may use every model. For example:
//
//	mcp: {servers: [search], tools: ["files__read_*"], rpm: 120}
type ClientMCP struct {
	// Servers are globs of the server names whose tools, prompts and
	// resources the client may list and use.
	Servers []string `yaml:"servers"`
	// Tools are globs of prefixed tool names (search__*) the client may
	// list and call, beside its servers' tools.
	Tools []string `yaml:"tools"`
	// RPM caps the client's tool calls per minute. 0: no cap.
	RPM int `yaml:"rpm"`
}
