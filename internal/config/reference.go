package config

import _ "embed" // for Reference and Example

//go:generate go run ./gen

// reference is the configuration reference that go generate writes from
// this package's schema; see package refdoc.
//
//go:embed reference.md
var reference string

// example is a commented starting configuration.
//
//go:embed example.yaml
var example string

// Reference returns the reference of the configuration file in Markdown:
// every block and field, with its YAML path, type, default and
// description, generated from the schema's doc comments and defaults (it
// is docs/CONFIG.md).
func Reference() string { return reference }

// Example returns a commented starting configuration file: providers,
// aliases with a ladder of targets, breaker, retry and timeouts, a client
// with limits and a budget, and a cache. Parse accepts it once the
// environment variables its header names are set.
func Example() string { return example }
