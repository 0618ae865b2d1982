package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// Dial returns a Redis client for a state URL (redis://[user:pass@]host:
// port/db, or rediss:// for TLS) and the fleet block: a single node, a
// Cluster (fc.Cluster; the URL's host and fc.Addrs are seeds) or a
// Sentinel-watched master (fc.MasterName; they are the Sentinels). Its
// errors never hold the URL's password.
func Dial(state config.StateURL, fc config.Fleet) (redis.UniversalClient, error) {
	o, err := redis.ParseURL(state.Value())
	if err != nil {
		return nil, fmt.Errorf("state %s: %v", state.String(), redactErr(err, state))
	}
	u := &redis.UniversalOptions{
		Addrs:      append([]string{o.Addr}, fc.Addrs...),
		Username:   o.Username,
		Password:   o.Password,
		DB:         o.DB,
		TLSConfig:  o.TLSConfig,
		MasterName: fc.MasterName,
		// A lost Redis must not hold up what waits on it: each call has
		// its own deadline, which bounds the socket's reads and writes
		// too (without ContextTimeoutEnabled go-redis would wait out
		// ReadTimeout on a hung server whatever the call's deadline),
		// and the pool gives up soon.
		ContextTimeoutEnabled: true,
		DialTimeout:           500 * time.Millisecond,
		ReadTimeout:           500 * time.Millisecond,
		WriteTimeout:          500 * time.Millisecond,
		PoolTimeout:           100 * time.Millisecond,
		MaxRetries:            -1,
	}
	if fc.Cluster {
		return redis.NewClusterClient(u.Cluster()), nil
	}
	if fc.MasterName != "" {
		return redis.NewFailoverClient(u.Failover()), nil
	}
	return redis.NewClient(u.Simple()), nil
}

// redactErr is err without the state URL's password.
func redactErr(err error, state config.StateURL) string {
	return strings.ReplaceAll(err.Error(), state.Value(), state.String())
}
