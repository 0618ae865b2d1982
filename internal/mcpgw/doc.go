// Package mcpgw federates Model Context Protocol servers behind one
// endpoint, with the protection the gateway gives model calls: a breaker
// per upstream server (and optionally per tool), a deadline per call,
// failover between replicas, retries only for tools that may be repeated,
// per-client rights and rate limits, and credentials that clients never
// see.
//
// The protocol is the official Go SDK's on both sides: Gateway.Handler
// serves Streamable HTTP (and the older HTTP+SSE transport under /sse) to
// clients with one mcp.Server per client key, whose tools are that
// client's share of the upstream servers' tools, each named
// server__tool; upstream, each replica has one mcp.ClientSession, over
// Streamable HTTP, SSE, or the stdin and stdout of a subprocess the
// gateway starts (mcp.CommandTransport), opened on first use and opened
// again when the server restarts or drops the session.
//
// Files, one concern each: gateway.go (building and closing), upstream.go
// (a replica's session), catalog.go (what a server offers, listing it),
// federate.go (naming and publishing it to each client's view), call.go
// (the call policy: breakers, deadlines, failover, retries), classify.go
// (what an error means), tenant.go (client rights and limits),
// progress.go (progress passed through), record.go (metrics hook and
// access log), handler.go (HTTP), status.go (the status snapshot).
package mcpgw
