package bedrock

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/smithy-go/encoding/httpbinding"
)

// paths are the operation URLs of one model, built once.
type paths struct {
	claude                   bool
	invoke, invokeStream     string
	converse, converseStream string
}

// target is InvokeModel's URL, or its streamed form's.
func (p *paths) target(stream bool) string {
	if stream {
		return p.invokeStream
	}
	return p.invoke
}

// maxCachedModels bounds the path cache; models are the configuration's,
// so it is never reached in practice.
const maxCachedModels = 4096

// pathCache maps a model to its paths, so a request escapes nothing.
type pathCache struct {
	base string
	m    sync.Map // model → *paths
	n    atomic.Int32
}

// get returns the paths of model, from the cache when it is there.
func (c *pathCache) get(model string) *paths {
	if p, ok := c.m.Load(model); ok {
		return p.(*paths)
	}
	// The model id is one path segment, escaped as the AWS SDK does:
	// everything but unreserved characters, "/" and ":" of ARNs included.
	root := c.base + "/model/" + httpbinding.EscapePath(model, true)
	p := &paths{
		claude:         isClaude(model),
		invoke:         root + "/invoke",
		invokeStream:   root + "/invoke-with-response-stream",
		converse:       root + "/converse",
		converseStream: root + "/converse-stream",
	}
	if c.n.Load() < maxCachedModels {
		if _, loaded := c.m.LoadOrStore(model, p); !loaded {
			c.n.Add(1)
		}
	}
	return p
}

// isClaude reports whether model names an Anthropic Claude model: a model
// id (anthropic.claude-…), a cross-region inference profile (us., eu.,
// apac., global. …anthropic.claude-…) or an ARN of either. An application
// inference profile's ARN does not say what it runs; it goes to Converse,
// which serves Claude too.
func isClaude(model string) bool {
	return strings.Contains(model, "anthropic.claude")
}
