package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// replicaEnv makes the test binary a gateway replica (TestReplicaProcess):
// its value is the path of the replica's configuration.
const replicaEnv = "FUSEBOX_GATEWAY_TEST_REPLICA"

// TestReplicaProcess is a replica for TestWorkSurvivesItsReplica, run in
// a process of its own so that it can be killed with SIGKILL: it serves
// the configuration at $FUSEBOX_GATEWAY_TEST_REPLICA on a free loopback
// port, which it prints, until it is killed.
func TestReplicaProcess(t *testing.T) {
	path := os.Getenv(replicaEnv)
	if path == "" {
		t.Skip("a replica for TestWorkSurvivesItsReplica")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	t.Fatal(http.Serve(ln, s.Handler()))
}

// process is a replica running in a child process.
type process struct {
	cmd    *exec.Cmd
	url    string
	stderr *strings.Builder
}

// spawn starts a replica on the configuration yaml and waits for its
// address.
func spawn(t *testing.T, name, yaml string) *process {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &process{stderr: &strings.Builder{}}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1")
	p.cmd.Env = append(os.Environ(), replicaEnv+"="+path)
	p.cmd.Stderr = &syncWriter{w: p.stderr}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
			p.url = u
			break
		}
	}
	if p.url == "" {
		p.kill()
		t.Fatalf("replica %s did not start:\n%s", name, p.stderr)
	}
	go io.Copy(io.Discard, out)
	return p
}

// kill ends the replica with SIGKILL: it cleans nothing up.
func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// Three replicas on one Redis, each its own process: a video job and a
// Batch API batch submitted on A, A killed with SIGKILL in the middle of
// both. B (or C) adopts both once A's lease ends: the job completes, is
// settled once and its content is served; the batch completes with every
// line's answer exactly once in its output. A started again on its
// directories settles nothing a second time.
func TestWorkSurvivesItsReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	rs := redistest.Start(t)
	simSrv, err := sim.New(sim.Config{Name: "p", Jobs: sim.Jobs{RunTime: 2 * time.Second, ContentBytes: 32 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	var chats atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			chats.Add(1)
			time.Sleep(5 * time.Millisecond) // a batch takes a while
		}
		simSrv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.CloseClientConnections(); up.Close(); simSrv.Close() })
	shared := t.TempDir() // the replicas' batch.dir, a shared volume
	conf := func(jobsDir string) string {
		return `state: ` + rs.URL() + `
fleet: {sync: 20ms, timeout: 2s, lease: 1s}
jobs_dir: ` + jobsDir + `
batch: {dir: ` + shared + `, concurrency: 4}
clients:
  - {name: studio, key: ks, budget: {daily: 1000}}
  - {name: batcher, key: kb}
providers:
  p: {type: openai, base_url: "` + up.URL + `/v1", keys: [pk]}
models:
  - name: chat
    targets: [{provider: p, model: m, price: {input: 1, output: 1}}]
jobs:
  - name: video
    poll_interval: 200ms
    targets: [{provider: p, model: sora-2, price: {per_second: 0.1, per_job: 0.5}}]
`
	}
	aDir := t.TempDir()
	a := spawn(t, "a", conf(aDir))
	b := spawn(t, "b", conf(t.TempDir()))
	c := spawn(t, "c", conf(t.TempDir()))
	client := func(p *process, key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(p.url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	ctx := t.Context()
	va := client(a, "ks")
	v, err := va.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "a fox", Seconds: openai.VideoSeconds8})
	if err != nil {
		t.Fatalf("submit on A: %v\n%s", err, a.stderr)
	}
	const lines = 300
	var in strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	ba := client(a, "kb")
	f, err := ba.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(in.String()), "in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	bat, err := ba.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "A to be in the middle of the batch", func() bool { return chats.Load() >= 40 })
	a.kill()
	killed := time.Now()
	if n := chats.Load(); n >= lines {
		t.Fatalf("the batch was over (%d calls) before A was killed", n)
	}

	// B answers for both at once, and completes them once A's lease ends.
	vb := client(b, "ks")
	slow(t, "B to complete A's job", func() bool {
		got, err := vb.Videos.Get(ctx, v.ID)
		return err == nil && got.Status == openai.VideoStatusCompleted
	})
	vc := client(c, "ks")
	t.Logf("the job completed on B %v after A was killed (lease 1s)", time.Since(killed).Round(time.Millisecond))
	resp, err := vc.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 32<<10 {
		t.Errorf("content through C: %d bytes", n)
	}
	bb := client(b, "kb")
	slow(t, "the batch to end", func() bool {
		got, err := bb.Batches.Get(ctx, bat.ID)
		if err != nil {
			t.Fatal(err)
		}
		bat = got
		return got.Status != openai.BatchStatusInProgress && got.Status != openai.BatchStatusValidating && got.Status != openai.BatchStatusFinalizing
	})
	t.Logf("the batch completed %v after A was killed, %d upstream calls for %d lines", time.Since(killed).Round(time.Millisecond), chats.Load(), lines)
	if bat.Status != openai.BatchStatusCompleted || bat.RequestCounts.Completed != lines {
		t.Fatalf("batch %s, counts %+v\nB:\n%s\nC:\n%s", bat.Status, bat.RequestCounts, b.stderr, c.stderr)
	}
	ids := outputIDs(t, []openai.Client{bb, client(c, "kb")}, bat.OutputFileID)
	for i := 1; i <= lines; i++ {
		if k := ids[fmt.Sprintf("r%d", i)]; k != 1 {
			t.Errorf("r%d is in the output %d times", i, k)
		}
	}
	if len(ids) != lines {
		t.Errorf("%d ids in the output, want %d", len(ids), lines)
	}

	// A, started again, yields what was adopted: the job's cost stays
	// counted once.
	a2 := spawn(t, "a2", conf(aDir))
	va2 := client(a2, "ks")
	if _, err := va2.Videos.Get(ctx, v.ID); err != nil {
		t.Errorf("restarted A: %v", err)
	}
	want := 0.1*8 + 0.5
	spent := ledgerOf(t, rs, "studio")
	if got := spent(); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("studio's spend %v, want the job's cost %v once", got, want)
	}
	time.Sleep(1500 * time.Millisecond) // A2's sweeps and adoption rounds: nothing may be settled again
	if got := spent(); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("studio's spend %v after A came back, want %v", got, want)
	}
	// The delete goes to the adopter (B or C; the other says 409 and
	// names the replica that can, as for any live owner).
	_, errB := vb.Videos.Delete(ctx, v.ID)
	_, errC := vc.Videos.Delete(ctx, v.ID)
	if errB != nil && errC != nil {
		t.Errorf("delete through B: %v; through C: %v", errB, errC)
	}
}

// slow is eventually with room for a lease to end and work to finish.
func slow(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 60*time.Second, what, cond)
}

// outputIDs counts the custom ids of an output file, read through the
// first client that has it.
func outputIDs(t *testing.T, cs []openai.Client, id string) map[string]int {
	t.Helper()
	var resp *http.Response
	var err error
	for _, c := range cs {
		if resp, err = c.Files.Content(context.Background(), id); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ids := map[string]int{}
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		var l struct {
			CustomID string `json:"custom_id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			t.Fatalf("a torn line in the output: %q", sc.Text())
		}
		ids[l.CustomID]++
	}
	return ids
}

// ledgerOf reads client's spend today as the fleet counts it.
func ledgerOf(t *testing.T, rs *redistest.Server, client string) func() float64 {
	t.Helper()
	rdb, err := fleet.Dial(config.StateURL(rs.URL()), config.Fleet{})
	if err != nil {
		t.Fatal(err)
	}
	f := fleet.New(fleet.Options{Client: rdb, Sync: 10 * time.Millisecond, Timeout: 2 * time.Second, Log: slog.New(slog.DiscardHandler)})
	l := f.Ledger(client)
	f.Start()
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { f.Close(); rdb.Close() }) })
	return func() float64 {
		time.Sleep(100 * time.Millisecond) // a few rounds read the fleet's figure
		day, _ := l.Spent(time.Now())
		return day
	}
}
