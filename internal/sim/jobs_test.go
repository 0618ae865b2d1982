package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// jobCall sends a request to the job API as the account key, with an
// Idempotency-Key when idem is set.
func jobCall(t *testing.T, ts *httptest.Server, method, path, key, idem, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, ts.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

const jobBody = `{"model":"sora-2","prompt":"a fox","seconds":"8"}`

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestJobLifecycle(t *testing.T) {
	clk := newFake()
	s, ts := start(t, Config{Clock: clk, Jobs: Jobs{QueueTime: time.Minute, RunTime: 2 * time.Minute, ContentBytes: 1000}})
	st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "", jobBody)
	id, _ := v["id"].(string)
	if st != 200 || v["status"] != JobQueued || v["object"] != "video" || v["seconds"] != "8" {
		t.Fatalf("submit: %d %v", st, v)
	}
	for _, step := range []struct {
		advance time.Duration
		status  string
	}{{30 * time.Second, JobQueued}, {time.Minute, JobInProgress}, {2 * time.Minute, JobCompleted}} {
		clk.Advance(step.advance)
		if _, v := jobCall(t, ts, "GET", "/v1/videos/"+id, "k1", "", ""); v["status"] != step.status {
			t.Fatalf("after %v: %v, want %s", step.advance, v, step.status)
		}
	}
	resp, err := ts.Client().Do(authed(ts.URL+"/v1/videos/"+id+"/content", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) != 1000 || string(b[:48]) != string(contentBlock(id)[:48]) {
		t.Errorf("content: %d, %d bytes", resp.StatusCode, len(b))
	}
	if st, _ := jobCall(t, ts, "GET", "/v1/videos/"+id, "k2", "", ""); st != 404 {
		t.Errorf("another account's poll: %d, want 404", st)
	}
	if st, v := jobCall(t, ts, "GET", "/v1/videos", "k1", "", ""); st != 200 || len(v["data"].([]any)) != 1 {
		t.Errorf("list: %d %v", st, v)
	}
	if st, _ := jobCall(t, ts, "DELETE", "/v1/videos/"+id, "k1", "", ""); st != 200 {
		t.Errorf("delete: %d", st)
	}
	if st, _ := jobCall(t, ts, "GET", "/v1/videos/"+id, "k1", "", ""); st != 404 {
		t.Errorf("poll after delete: %d", st)
	}
	if got := s.Stats(); got.JobsCreated != 1 || got.JobsCompleted != 1 || got.BilledSeconds != 8 || got.APIs["videos"] != 1 || got.ContentBytes != 1000 {
		t.Errorf("stats %+v", got)
	}
}

func authed(url, key string) *http.Request {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}

// TestJobRefusalsReplayedForTheirKey: queue_full (the account's cap) and
// capacity refusals are answered again to every submit with their key,
// even once the provider could take the job; another key gets it.
func TestJobRefusalsReplayedForTheirKey(t *testing.T) {
	clk := newFake()
	s, ts := start(t, Config{Clock: clk, Jobs: Jobs{QueueTime: time.Minute, MaxQueued: 1}})
	jobCall(t, ts, "POST", "/v1/videos", "k1", "a", jobBody)
	if st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "b", jobBody); st != 429 || errCode(v) != "queue_full" {
		t.Fatalf("over the account's cap: %d %v", st, v)
	}
	if st, _ := jobCall(t, ts, "POST", "/v1/videos", "k2", "b", jobBody); st != 200 {
		t.Errorf("another account under the same key: %d, want a job", st)
	}
	clk.Advance(2 * time.Minute) // the first job has started: room again
	if st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "b", jobBody); st != 429 || errCode(v) != "queue_full" {
		t.Errorf("the refused key again: %d %v, want the refusal replayed", st, v)
	}
	if st, _ := jobCall(t, ts, "POST", "/v1/videos", "k1", "c", jobBody); st != 200 {
		t.Errorf("a new key: %d, want a job", st)
	}
	s.SetFaults([]Fault{{Kind: Capacity, To: time.Second}})
	if st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "d", jobBody); st != 503 || errCode(v) != "provider_capacity_exceeded" {
		t.Fatalf("capacity: %d %v", st, v)
	}
	clk.Advance(time.Minute)
	if st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "d", jobBody); st != 503 || errCode(v) != "provider_capacity_exceeded" {
		t.Errorf("capacity key again: %d %v, want it replayed", st, v)
	}
	keys := map[string]KeyStatus{}
	for _, k := range s.Keys() {
		keys[k.Account+"/"+k.Key] = k
	}
	if k := keys["k1/b"]; k.Submits != 2 || k.Refused != "queue_full" || k.Job != "" {
		t.Errorf("k1/b = %+v", k)
	}
	if k := keys["k1/d"]; k.Submits != 2 || k.Refused != "provider_capacity_exceeded" {
		t.Errorf("k1/d = %+v", k)
	}
}

// TestJobSameKeySameJob: a submit resent with its key answers the job
// the first made, marked replayed; another body under it is a 422.
func TestJobSameKeySameJob(t *testing.T) {
	s, ts := start(t, Config{Clock: newFake(), Jobs: Jobs{QueueTime: time.Minute}})
	_, a := jobCall(t, ts, "POST", "/v1/videos", "k1", "x", jobBody)
	_, b := jobCall(t, ts, "POST", "/v1/videos", "k1", "x", jobBody)
	if a["id"] != b["id"] || s.Stats().JobsCreated != 1 {
		t.Errorf("ids %v and %v, %d jobs", a["id"], b["id"], s.Stats().JobsCreated)
	}
	if st, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "x", `{"model":"sora-2","prompt":"another"}`); st != 422 || errCode(v) != "idempotency_key_reused" {
		t.Errorf("another body: %d %v", st, v)
	}
	if st, v := jobCall(t, ts, "GET", "/v1/video_keys/x", "k1", "", ""); st != 200 || v["id"] != a["id"] {
		t.Errorf("lookup by key: %d %v", st, v)
	}
	if st, _ := jobCall(t, ts, "GET", "/v1/video_keys/nope", "k1", "", ""); st != 404 {
		t.Errorf("lookup of an unknown key: %d", st)
	}
}

// TestJobAcceptResetMakesTheJob: the job exists though its answer was
// lost; a resend with the key answers it.
func TestJobAcceptResetMakesTheJob(t *testing.T) {
	s, ts := start(t, Config{Clock: newFake(), Jobs: Jobs{QueueTime: time.Minute},
		Faults: []Fault{{Kind: AcceptReset, To: time.Second}}})
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", ts.URL+"/v1/videos", strings.NewReader(jobBody))
	req.Header.Set("Authorization", "Bearer k1")
	req.Header.Set("Idempotency-Key", "x")
	if _, err := c.Do(req); err == nil {
		t.Fatal("the submit got an answer, want a reset")
	}
	if n := s.Stats().JobsCreated; n != 1 {
		t.Fatalf("%d jobs, want the one made before the reset", n)
	}
	if st, _ := jobCall(t, ts, "POST", "/v1/videos", "k1", "x", jobBody); st != 200 || s.Stats().JobsCreated != 1 {
		t.Errorf("resend: %d, %d jobs", st, s.Stats().JobsCreated)
	}
}

func TestJobFailedWithCategory(t *testing.T) {
	clk := newFake()
	_, ts := start(t, Config{Clock: clk, Jobs: Jobs{RunTime: time.Minute},
		Faults: []Fault{{Kind: JobFailed, Code: "moderation_blocked", Message: "no"}}})
	_, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "", jobBody)
	clk.Advance(time.Minute)
	_, v = jobCall(t, ts, "GET", "/v1/videos/"+v["id"].(string), "k1", "", "")
	if v["status"] != JobFailedNow || errCode(v) != "moderation_blocked" {
		t.Errorf("failed job: %v", v)
	}
	if st, _ := jobCall(t, ts, "POST", "/v1/chat/completions", "k1", "", chatBody(false)); st != 200 {
		t.Errorf("a job fault hit a chat completion: %d", st)
	}
}

func TestJobContentEndless(t *testing.T) {
	s, ts := start(t, Config{Clock: newFake(), Jobs: Jobs{ContentBytes: -1}})
	_, v := jobCall(t, ts, "POST", "/v1/videos", "k1", "", jobBody)
	ctx, cancel := context.WithCancel(context.Background())
	req := authed(ts.URL+"/v1/videos/"+v["id"].(string)+"/content", "k1").WithContext(ctx)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.CopyN(io.Discard, resp.Body, 8<<20); err != nil || n != 8<<20 {
		t.Fatalf("read %d: %v", n, err)
	}
	cancel()
	resp.Body.Close()
	waitFor(t, "the bytes read counted", func() bool { return s.Stats().ContentBytes >= 8<<20 })
}

func TestImagesGenerations(t *testing.T) {
	s, ts := start(t, Config{Clock: newFake()})
	st, v := jobCall(t, ts, "POST", "/v1/images/generations", "k1", "", `{"model":"img","prompt":"a cat","n":2}`)
	if st != 200 || len(v["data"].([]any)) != 2 || s.Stats().Images != 2 {
		t.Fatalf("%d %v", st, v)
	}
	s.SetFaults([]Fault{{Kind: ErrorStorm, Status: 502}})
	if st, _ := jobCall(t, ts, "POST", "/v1/images/generations", "k1", "", `{"model":"img","prompt":"a cat"}`); st != 502 {
		t.Errorf("storm: %d", st)
	}
	if st, _ := jobCall(t, ts, "POST", "/v1/images/generations", "k1", "", `{"model":"img","prompt":"a cat","n":11}`); st != 400 {
		t.Errorf("n 11: %d", st)
	}
}

func TestJobScenarioAndControl(t *testing.T) {
	c, err := ParseScenario("j.yaml", []byte("jobs: {queue_time: 1m, run_time: 2m, max_queued: 3, content_bytes: 2048}\n"+
		"faults:\n  - {kind: job_failed, code: runtime_unavailable, fraction: 0.5}\n  - {kind: capacity, status: 429, retry_after: 2s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs != (Jobs{QueueTime: time.Minute, RunTime: 2 * time.Minute, MaxQueued: 3, ContentBytes: 2048}) || c.Faults[0].Code != "runtime_unavailable" {
		t.Errorf("config %+v", c)
	}
	if _, err := ParseScenario("j.yaml", []byte("faults:\n  - {kind: reset, code: x}\n")); err == nil ||
		!strings.Contains(err.Error(), "faults[0].code: does not apply to a reset fault") {
		t.Errorf("code on a reset: %v", err)
	}
	s, ts := start(t, Config{Clock: newFake()})
	if st, _ := jobCall(t, ts, "POST", "/sim/faults", "", "", `{"kind":"job_failed","code":"runtime_unavailable","to":"10s"}`); st != 200 {
		t.Errorf("setting a job fault: %d", st)
	}
	if f := s.Faults(); len(f) != 1 || f[0].Code != "runtime_unavailable" {
		t.Errorf("faults %+v", f)
	}
	jobCall(t, ts, "POST", "/v1/videos", "k1", "x", `{"model":"m","prompt":"p"}`)
	st, v := jobCall(t, ts, "GET", "/sim/jobs", "", "", "")
	jobs, _ := v["jobs"].([]any)
	keys, _ := v["keys"].([]any)
	if st != 200 || len(jobs) != 1 || len(keys) != 1 {
		t.Errorf("/sim/jobs: %d %v", st, v)
	}
}
