package fleet

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// Every client Dial makes bounds a call's socket reads and writes by the
// call's deadline (fleet.timeout on the request path): without it,
// go-redis waits out ReadTimeout on a hung Redis, whatever the deadline,
// and a budgeted request waited 500 ms on a SIGSTOPped server instead of
// 20 ms.
func TestDialBoundsReadsByTheCallsDeadline(t *testing.T) {
	for _, fc := range []config.Fleet{{}, {Cluster: true}, {MasterName: "mymaster"}} {
		rdb, err := Dial(config.StateURL("redis://127.0.0.1:1/0"), fc)
		if err != nil {
			t.Fatal(err)
		}
		var on bool
		switch c := rdb.(type) {
		case *redis.Client:
			on = c.Options().ContextTimeoutEnabled
		case *redis.ClusterClient:
			on = c.Options().ContextTimeoutEnabled
		default:
			t.Fatalf("%+v: a %T", fc, rdb)
		}
		if !on {
			t.Errorf("%+v: the client ignores the call's deadline on its socket", fc)
		}
		rdb.Close()
	}
}
