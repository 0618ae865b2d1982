package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestControlRoundTrip(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Faults: []Fault{{Kind: ErrorStorm, Status: 529, From: time.Minute, To: 80 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	fake.Advance(10 * time.Second)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		rec := serve(s, method, path, body)
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	code, body := do("GET", "/sim/faults", "")
	want := `{"elapsed":"10s","faults":[{"kind":"error_storm","from":"1m0s","to":"1m20s","status":529,"live":false,"active":false,"hits":0}]}`
	if code != 200 || body != want {
		t.Errorf("GET: %d %s\nwant %s", code, body, want)
	}

	code, body = do("POST", "/sim/faults", `{"kind":"throttle","retry_after":"5s","fraction":0.5,"to":"30s"}`)
	want = `{"elapsed":"10s","faults":[{"kind":"error_storm","from":"1m0s","to":"1m20s","status":529,"live":false,"active":false,"hits":0},` +
		`{"kind":"throttle","to":"30s","fraction":0.5,"retry_after":"5s","live":true,"active":true,"hits":0}]}`
	if code != 200 || body != want {
		t.Errorf("POST one: %d %s\nwant %s", code, body, want)
	}
	var report struct {
		Elapsed string
		Faults  []FaultStatus
	}
	if err := json.Unmarshal([]byte(body), &report); err != nil || !reflect.DeepEqual(report.Faults, s.Faults()) {
		t.Errorf("decoded %+v (%v), want %+v", report.Faults, err, s.Faults())
	}
	got := s.Faults()[1]
	if got.Fault != (Fault{Kind: Throttle, RetryAfter: 5 * time.Second, Fraction: 0.5, To: 30 * time.Second}) || !got.Live {
		t.Errorf("live fault = %+v", got)
	}

	// A list replaces the live faults.
	code, _ = do("POST", "/sim/faults", `[{"kind":"auth"},{"kind":"latency_spike","extra":"250ms","from":"1h"}]`)
	if fs := s.Faults(); code != 200 || len(fs) != 3 || fs[1].Kind != Auth || fs[2].Extra != 250*time.Millisecond {
		t.Errorf("POST list: %d, faults %+v", code, fs)
	}
	if rec := serve(s, "POST", "/v1/chat/completions", chatBody(false)); rec.Code != 401 {
		t.Errorf("call with a live auth fault: %d, want 401", rec.Code)
	}

	for _, bad := range []struct{ body, want string }{
		{`{"kind":"auth","fraction":"all"}`, "cannot unmarshal"},
		{`{"kind":"auth","colour":"red"}`, `unknown field "colour"`},
		{`{"kind":"throttle","retry_after":"5"}`, `retry_after: bad duration "5"`},
		{`{"kind":"error_storm","status":418}`, "faults[0].status: is 418"},
		{`[{"kind":"auth"},{"kind":"nope"}]`, `faults[1].kind: unknown kind "nope"`},
	} {
		code, body := do("POST", "/sim/faults", bad.body)
		var e struct{ Error struct{ Message string } }
		json.Unmarshal([]byte(body), &e)
		if code != 400 || !strings.Contains(e.Error.Message, bad.want) {
			t.Errorf("POST %s: %d %s, want 400 saying %s", bad.body, code, body, bad.want)
		}
	}
	if len(s.Faults()) != 3 {
		t.Error("a rejected POST changed the faults")
	}

	if code, _ := do("DELETE", "/sim/faults", ""); code != 200 || len(s.Faults()) != 1 || s.Faults()[0].Live {
		t.Errorf("DELETE: %d, faults %+v; want the scheduled one left", code, s.Faults())
	}
	if code, body := do("DELETE", "/sim/faults?all=true", ""); code != 200 || body != `{"elapsed":"10s","faults":[]}` {
		t.Errorf("DELETE all: %d %s", code, body)
	}
}

func TestStatsEndpoint(t *testing.T) {
	s, ts := start(t, Config{Faults: []Fault{{Kind: ErrorStorm, Fraction: 0.5}}})
	for range 10 {
		serve(s, "POST", "/v1/chat/completions", chatBody(false))
	}
	resp, err := http.Get(ts.URL + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var got Stats
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := s.Stats()
	if got.Calls != 10 || got.Finished() != 10 || got.Outcomes[OutcomeOK] != want.Outcomes[OutcomeOK] ||
		got.Outcomes[OutcomeError] != want.Outcomes[OutcomeError] || got.BilledInputTokens != want.BilledInputTokens || got.Name != "sim" {
		t.Errorf("GET /sim/stats = %s, want %+v", b, want)
	}
}
