package config

import (
	"reflect"
	"time"
)

// checkKeysAndLog checks keys: and request_log:.
func (c *Config) checkKeysAndLog(r *report) {
	negatives(r, "keys", reflect.ValueOf(c.Keys))
	if c.Keys.Poll > time.Second {
		r.field("keys.poll", "must be at most 1s: a key revoked on one replica is refused by the others within it")
	}
	negatives(r, "request_log", reflect.ValueOf(c.RequestLog))
	if c.RequestLog.Path == "" && c.RequestLog != (RequestLog{}) {
		r.field("request_log", "set without a path, so the request log stays off; give request_log.path")
	}
}
