package fleet

import (
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/limit"
)

// Each replica paces a shared limit at its share of the replicas alive;
// one that leaves gives its share back to the others.
func TestLimitsLeasedByShare(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 3, true)
	full := limit.Limits{RequestsPerMinute: 600, TokensPerMinute: 90000, RequestBurst: 10}
	var ps []*limit.Pacer
	for _, f := range fs {
		p, err := limit.NewPacer(limit.PacerSettings{Limits: full})
		if err != nil {
			t.Fatal(err)
		}
		f.ShareLimits("target:p/m", p, full)
		ps = append(ps, p)
	}
	for i, p := range ps {
		waitFor(t, "a third of the limit on replica "+string(rune('A'+i)), func() bool {
			l := p.Limits()
			return l.RequestsPerMinute == 200 && l.TokensPerMinute == 30000 && l.RequestBurst == 4
		})
	}
	fs[2].Close()
	for i, p := range ps[:2] {
		waitFor(t, "half the limit on replica "+string(rune('A'+i)), func() bool { return p.Limits().RequestsPerMinute == 300 })
	}
}

func TestShareOf(t *testing.T) {
	l := limit.Limits{RequestsPerMinute: 100, TokensPerMinute: 1000, RequestBurst: 5, TokenBurst: 1}
	if got := shareOf(l, 1); got != l {
		t.Errorf("one replica: %+v", got)
	}
	if got, want := shareOf(l, 4), (limit.Limits{RequestsPerMinute: 25, TokensPerMinute: 250, RequestBurst: 2, TokenBurst: 1}); got != want {
		t.Errorf("four replicas: %+v, want %+v", got, want)
	}
	if got := shareOf(limit.Limits{RequestsPerMinute: 60}, 3); got.RequestBurst != 0 || got.RequestsPerMinute != 20 {
		t.Errorf("a default burst stays the share's default: %+v", got)
	}
}

// A session served on one replica is recalled on another; an unknown one
// is "".
func TestSessionsShared(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false)
	fs[0].Remember("c\x00smart\x00conv", "openai/gpt-4.1")
	fs[0].sync()
	if got := fs[1].Recall("c\x00smart\x00conv"); got != "openai/gpt-4.1" {
		t.Errorf("recalled %q on the other replica", got)
	}
	if got := fs[1].Recall("c\x00smart\x00other"); got != "" {
		t.Errorf("an unknown session recalled %q", got)
	}
	// A client chooses its session ids: a megabyte of one costs Redis a
	// key of the same size as any other.
	huge := strings.Repeat("x", 1<<20)
	if a, b := len(fs[0].sessionKey(huge)), len(fs[0].sessionKey("c")); a != b {
		t.Errorf("a 1 MiB session id made a key of %d bytes (a short one: %d)", a, b)
	}
	fs[0].Remember(huge, "openai/gpt-4.1")
	fs[0].sync()
	if got := fs[1].Recall(huge); got != "openai/gpt-4.1" {
		t.Errorf("the huge session recalled %q", got)
	}
}
