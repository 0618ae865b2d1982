package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/catalog"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/sim"
	"github.com/spf13/cobra"
)

type demoOptions struct {
	listen   string
	duration time.Duration
	rate     float64
	cycle    time.Duration
	every    time.Duration
	drain    time.Duration // how long the gateway finishes what is in flight when the demo stops
}

func demoCommand() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the gateway against simulated providers and clouds (Anthropic, Bedrock, Vertex AI) through a scripted outage (no keys, no network)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:0", "gateway address (loopback; port 0 picks a free one)")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	cmd.Flags().Float64Var(&o.rate, "rate", 5, "client requests per second")
	cmd.Flags().DurationVar(&o.cycle, "cycle", 40*time.Second, "length of the scripted outage cycle")
	cmd.Flags().DurationVar(&o.every, "summary", 5*time.Second, "how often to print a summary line")
	o.drain = demoDrain
	return cmd
}

// demoProvider is one simulated provider of the demo.
type demoProvider struct {
	name, model   string
	input, output float64 // USD per million tokens
	latency       sim.Latency
	// cloud is the provider's type when it is not an OpenAI-compatible
	// host: anthropic, bedrock or vertex, for the claude ladder.
	cloud string
	srv   *sim.Server
	// root is the server's root URL; url the OpenAI API root, root + "/v1".
	root, url string
}

// The claude ladder's model, and the simulated clouds' credentials: keys
// made up for the demo, which the simulators check (SigV4 signatures
// against the AWS keys, token requests against the service account's
// public key).
const (
	demoClaude    = "claude-sonnet-4-5"
	demoAWSRegion = "us-east-1"
	demoAWSKeyID  = "AKIDFUSEBOXDEMO"
	demoAWSSecret = "fusebox-demo-secret"
	demoProject   = "fusebox-demo"
	demoSAEmail   = "fusebox-demo@fusebox-demo.iam.gserviceaccount.com"
)

func demoProviders() []*demoProvider {
	return []*demoProvider{
		{name: "primary", model: "frontier-large", input: 15, output: 75,
			latency: sim.Latency{Median: 250 * time.Millisecond, P99: 900 * time.Millisecond, TTFB: 120 * time.Millisecond, TokensPerSecond: 200}},
		{name: "secondary", model: "midsize", input: 2, output: 8,
			latency: sim.Latency{Median: 180 * time.Millisecond, P99: 600 * time.Millisecond, TTFB: 90 * time.Millisecond, TokensPerSecond: 300}},
		{name: "cheap", model: "small-fast", input: 0.27, output: 1.1,
			latency: sim.Latency{Median: 120 * time.Millisecond, P99: 400 * time.Millisecond, TTFB: 60 * time.Millisecond, TokensPerSecond: 400}},
		claudeOn("anthropic", 300*time.Millisecond),
		claudeOn("bedrock", 350*time.Millisecond),
		claudeOn("vertex", 400*time.Millisecond),
	}
}

// claudeOn is the claude ladder's provider on cloud (a provider type,
// also its name), priced from the catalog.
func claudeOn(cloud string, median time.Duration) *demoProvider {
	m, _ := catalog.Lookup(cloud, demoClaude)
	return &demoProvider{name: cloud, cloud: cloud, model: demoClaude, input: m.Price.Input, output: m.Price.Output,
		latency: sim.Latency{Median: median, P99: 3 * median, TTFB: median / 2, TokensPerSecond: 200}}
}

// demoLadders are the demo's aliases and their providers, in ladder
// order: smart on the OpenAI-compatible hosts, claude across the clouds.
func demoLadders(provs []*demoProvider) (smart, claude []*demoProvider) {
	for _, p := range provs {
		if p.cloud == "" {
			smart = append(smart, p)
		} else {
			claude = append(claude, p)
		}
	}
	return smart, claude
}

// outage returns the faults of one cycle: the primary answers 503 to every
// call from 25% to 55% of the cycle; the secondary throttles half its calls
// (Retry-After 5 s) from 40% to 65%. On the claude ladder, Anthropic
// answers 529 overloaded_error to every call from 70% to 95%, and Bedrock
// throttles every call (ThrottlingException, Retry-After 5 s) from 80% to
// 95%, so that Vertex AI serves.
func outage(cycle time.Duration) map[string][]sim.Fault {
	at := func(f float64) time.Duration { return time.Duration(f * float64(cycle)) }
	return map[string][]sim.Fault{
		"primary":   {{Kind: sim.ErrorStorm, Status: 503, Fraction: 1, From: at(0.25), To: at(0.55)}},
		"secondary": {{Kind: sim.Throttle, RetryAfter: 5 * time.Second, Fraction: 0.5, From: at(0.40), To: at(0.65)}},
		"anthropic": {{Kind: sim.ErrorStorm, Status: 529, Fraction: 1, From: at(0.70), To: at(0.95)}},
		"bedrock":   {{Kind: sim.Throttle, RetryAfter: 5 * time.Second, Fraction: 1, From: at(0.80), To: at(0.95)}},
	}
}

func runDemo(ctx context.Context, o demoOptions, out io.Writer) error {
	if o.rate <= 0 || o.cycle <= 0 {
		return fmt.Errorf("demo: --rate and --cycle must be positive")
	}
	if o.drain <= 0 {
		o.drain = demoDrain
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	start := time.Now()
	stamp := func() string { return fmt.Sprintf("%6.1fs", time.Since(start).Seconds()) }
	var mu sync.Mutex // serialises output lines
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, stamp()+"  "+format+"\n", args...)
	}

	st, err := startDemo(o.listen, func(t breaker.Transition) {
		extra := ""
		if t.To == breaker.StateOpen {
			extra = fmt.Sprintf(", next probe in %v", time.Until(t.OpenUntil).Round(100*time.Millisecond))
		}
		say("breaker %-28s %s -> %s (%s%s)", t.Name, t.From, t.To, t.Reason, extra)
	})
	if err != nil {
		return err
	}
	defer st.close()
	provs, base, token := st.provs, st.base, st.token
	gctx, stopGateway := context.WithCancel(context.Background())
	gdone := make(chan error, 1)
	go func() { gdone <- st.gw.ListenAndServe(gctx, st.ln, o.drain) }()

	fmt.Fprintf(out, "Fusebox demo: a gateway in front of simulated providers and clouds, no keys, no network.\n")
	fmt.Fprintf(out, "  model \"smart\"  = primary/%s ($15/$75 per Mtok) -> secondary/%s ($2/$8) -> cheap/%s ($0.27/$1.10)\n",
		provs[0].model, provs[1].model, provs[2].model)
	fmt.Fprintf(out, "  model \"claude\" = %s on Anthropic -> AWS Bedrock -> Vertex AI (SigV4 and OAuth checked by the simulators)\n", demoClaude)
	fmt.Fprintf(out, "  every %v: primary answers 503 from %v to %v; secondary throttles half its calls from %v to %v;\n",
		o.cycle, o.cycle/4, o.cycle*55/100, o.cycle*40/100, o.cycle*65/100)
	fmt.Fprintf(out, "    Anthropic answers 529 overloaded from %v to %v; Bedrock throttles (ThrottlingException) from %v to %v\n",
		o.cycle*70/100, o.cycle*95/100, o.cycle*80/100, o.cycle*95/100)
	fmt.Fprintf(out, "  API        %s/v1   (try: curl %s/v1/chat/completions -d '{\"model\":\"smart\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}')\n", base, base)
	fmt.Fprintf(out, "  dashboard  %s/dashboard#token=%s\n", base, token)
	fmt.Fprintf(out, "  metrics    %s/metrics\n", base)
	fmt.Fprintf(out, "  Ctrl-C to stop.\n\n")

	tally := demoTally{}
	for _, p := range provs {
		tally.order = append(tally.order, p.name)
	}
	var wg sync.WaitGroup
	wg.Go(func() { scriptOutages(ctx, nil, o.cycle, provs, say) })
	wg.Go(func() { trickle(ctx, base, o.rate, provs, &tally) })
	ticker := time.NewTicker(o.every)
	defer ticker.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-ticker.C:
			say("%s", tally.line())
		}
	}
	wg.Wait()
	stopGateway()
	gerr := <-gdone
	if errors.Is(gerr, context.DeadlineExceeded) {
		// Stopping the demo cuts what the drain did not finish: no error
		// of the user's to report.
		fmt.Fprintf(out, "%s  stopped: what was still in flight after %v was cut\n", stamp(), o.drain)
		gerr = nil
	}
	fmt.Fprintf(out, "\n%s  done: %s\n", stamp(), tally.line())
	return gerr
}

// demoDrain is the demo's drain.
const demoDrain = 5 * time.Second

// demoStack is what the demo runs: its simulated providers, each on a
// loopback listener, and the gateway in front of them, not yet serving
// (ln is its listener).
type demoStack struct {
	provs   []*demoProvider
	servers []*http.Server
	gw      *gateway.Server
	ln      net.Listener
	base    string // the gateway's root URL
	token   string // the admin token
	dir     string // holds the service-account key file
}

// startDemo starts the simulated providers and builds the gateway on
// listen; onTransition is told of every breaker transition.
func startDemo(listen string, onTransition func(breaker.Transition)) (_ *demoStack, err error) {
	st := &demoStack{provs: demoProviders(), token: randomToken()}
	defer func() {
		if err != nil {
			st.close()
		}
	}()
	if st.dir, err = os.MkdirTemp("", "fusebox-demo-"); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	for i, p := range st.provs {
		if err := st.startSim(p, uint64(i+1), key); err != nil {
			return nil, err
		}
	}
	saFile, err := writeServiceAccount(st.dir, st.provs, key)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse("demo", []byte(demoConfig(listen, st.token, saFile, st.provs)), func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("demo: configuration: %w", err)
	}
	st.gw, err = gateway.New(gateway.Options{
		Config: cfg,
		Logger: discardLogger(),
		// The demo's outage lasts seconds: the dashboard's charts sample
		// every second to show it.
		DashboardInterval: time.Second,
		OnTransition:      onTransition,
	})
	if err != nil {
		return nil, err
	}
	if st.ln, err = net.Listen("tcp", listen); err != nil {
		return nil, err
	}
	st.base = "http://" + st.ln.Addr().String()
	return st, nil
}

// startSim starts p's simulator on a loopback port. The clouds' simulators
// check the demo's credentials: SigV4 with its AWS keys, and JWTs signed
// by key for the service account.
func (st *demoStack) startSim(p *demoProvider, seed uint64, key *rsa.PrivateKey) error {
	c := sim.Config{Name: p.name, Seed: seed, Latency: p.latency, Output: sim.Output{Tokens: 60}}
	switch p.cloud {
	case "bedrock":
		c.AWS = sim.AWS{Region: demoAWSRegion, Keys: map[string]string{demoAWSKeyID: demoAWSSecret}}
	case "vertex":
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return err
		}
		pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
		c.Google = sim.Google{Project: demoProject, ServiceAccounts: map[string]string{demoSAEmail: pub}}
	}
	s, err := sim.New(c)
	if err != nil {
		return err
	}
	p.srv = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	p.root = "http://" + ln.Addr().String()
	p.url, st.servers = p.root+"/v1", append(st.servers, hs)
	return nil
}

// writeServiceAccount writes, in dir, the key file of the demo's service
// account, its token_uri the vertex simulator's token endpoint, and
// returns its path.
func writeServiceAccount(dir string, provs []*demoProvider, key *rsa.PrivateKey) (string, error) {
	tokenURI := ""
	for _, p := range provs {
		if p.cloud == "vertex" {
			tokenURI = p.root + "/token"
		}
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": demoProject, "private_key_id": "demo",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": demoSAEmail, "client_id": "1", "token_uri": tokenURI,
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "service-account.json")
	return path, os.WriteFile(path, b, 0o600)
}

// close stops the simulators and removes the key file; the gateway is
// stopped by its ListenAndServe's context.
func (st *demoStack) close() {
	if st.gw != nil {
		st.gw.Close()
	}
	for _, s := range st.servers {
		s.Close()
	}
	for _, p := range st.provs {
		if p.srv != nil {
			p.srv.Close()
		}
	}
	if st.dir != "" {
		os.RemoveAll(st.dir)
	}
}

// scriptOutages applies the outage cycle to the simulators, again at the
// start of every cycle, and says what happens at each phase, until ctx
// ends; clk nil is the system clock.
func scriptOutages(ctx context.Context, clk clock.Clock, cycle time.Duration, provs []*demoProvider, say func(string, ...any)) {
	clk = clock.Or(clk)
	faults := outage(cycle)
	for n := 1; ; n++ {
		start := clk.Now()
		for _, p := range provs {
			if err := p.srv.SetFaults(faults[p.name]); err != nil {
				say("demo: setting faults on %s: %v", p.name, err)
			}
		}
		say("outage cycle %d begins: every provider healthy, the primary serves", n)
		for _, ph := range demoPhases(cycle) {
			if clock.Sleep(ctx, clk, start.Add(ph.at).Sub(clk.Now())) != nil {
				return
			}
			say("%s", ph.say)
		}
		if clock.Sleep(ctx, clk, start.Add(cycle).Sub(clk.Now())) != nil {
			return
		}
	}
}

// demoPhase is a moment of the outage cycle and what to say of it.
type demoPhase struct {
	at  time.Duration
	say string
}

// demoPhases narrates outage(cycle), in order.
func demoPhases(cycle time.Duration) []demoPhase {
	at := func(f float64) time.Duration { return time.Duration(f * float64(cycle)) }
	return []demoPhase{
		{at(0.25), "phase: primary down: 503 to every call. Its breaker opens, and the secondary serves."},
		{at(0.40), "phase: secondary throttled: 429 to half its calls, Retry-After 5s. Fusebox rests its key (its breaker stays closed) and the cheap target takes the rest."},
		{at(0.55), "phase: primary recovers. Its breaker closes once a probe succeeds, and it serves again."},
		{at(0.65), "phase: secondary's throttle over: every provider healthy."},
		{at(0.70), "phase: Anthropic answers 529 overloaded to every claude call. Its breaker opens, and Claude on Bedrock serves."},
		{at(0.80), "phase: Bedrock throttles every call (ThrottlingException, Retry-After 5s). Fusebox rests it (its breaker stays closed), and Vertex AI serves Claude."},
		{at(0.95), "phase: Anthropic and Bedrock recover. Anthropic's breaker closes once a probe succeeds, and it serves Claude again."},
	}
}

// demoTally counts what the demo's client saw; order is the ladder's
// providers, the order "served by" lists them in.
type demoTally struct {
	order            []string
	requests, errors atomic.Int64
	mu               sync.Mutex
	served           map[string]int
	cost             float64
}

func (t *demoTally) record(target string, cost float64, failed bool) {
	t.requests.Add(1)
	if failed {
		t.errors.Add(1)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.served == nil {
		t.served = map[string]int{}
	}
	t.served[target]++
	t.cost += cost
}

func (t *demoTally) line() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var served []string
	for _, name := range t.order {
		for target, n := range t.served {
			if strings.SplitN(target, "/", 2)[0] == name {
				served = append(served, fmt.Sprintf("%s %d", name, n))
			}
		}
	}
	return fmt.Sprintf("requests %d, errors seen by clients %d, served by: %s; cost $%.4f",
		t.requests.Load(), t.errors.Load(), strings.Join(served, ", "), t.cost)
}

// trickle sends requests at rate per second to each alias (smart and
// claude) until ctx ends: every fourth is streamed.
func trickle(ctx context.Context, base string, rate float64, provs []*demoProvider, tally *demoTally) {
	prices := map[string][2]float64{}
	for _, p := range provs {
		prices[p.name] = [2]float64{p.input, p.output}
	}
	client := &http.Client{Timeout: 60 * time.Second}
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stream := n%4 == 3
		for _, model := range []string{"smart", "claude"} {
			wg.Go(func() {
				target, usage, err := demoCall(ctx, client, base, model, stream)
				if ctx.Err() != nil {
					return // stopping: not a failure the client would see
				}
				name, _, _ := strings.Cut(target, "/")
				p := prices[name]
				tally.record(target, (float64(usage[0])*p[0]+float64(usage[1])*p[1])/1e6, err != nil)
			})
		}
	}
}

// demoCall sends one request for model and returns the target that served, the
// prompt and completion tokens, and any error the client would see.
func demoCall(ctx context.Context, c *http.Client, base, model string, stream bool) (string, [2]int, error) {
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Explain circuit breakers in one paragraph."}]`
	if stream {
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	body += "}"
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", [2]int{}, err
	}
	defer resp.Body.Close()
	target := resp.Header.Get("X-Fusebox-Target")
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return target, [2]int{}, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var u struct {
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
		Error any `json:"error"`
	}
	if !stream {
		if err := json.NewDecoder(resp.Body).Decode(&u); err != nil || u.Usage == nil {
			return target, [2]int{}, fmt.Errorf("bad answer: %v", err)
		}
		return target, [2]int{u.Usage.Prompt, u.Usage.Completion}, nil
	}
	sc := bufio.NewScanner(resp.Body)
	var usage [2]int
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		data := line[len("data: "):]
		if string(data) == "[DONE]" {
			return target, usage, nil
		}
		u.Usage, u.Error = nil, nil
		if json.Unmarshal(data, &u) == nil {
			if u.Error != nil {
				return target, usage, fmt.Errorf("stream error: %s", data)
			}
			if u.Usage != nil {
				usage = [2]int{u.Usage.Prompt, u.Usage.Completion}
			}
		}
	}
	return target, usage, fmt.Errorf("stream ended without [DONE]: %v", sc.Err())
}

// demoConfig is the gateway configuration of the demo, as YAML, so it goes
// through the same parsing and validation as a user's file; saFile is the
// service-account key file of the vertex provider.
func demoConfig(listen, token, saFile string, provs []*demoProvider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %q\nadmin_token: %q\nproviders:\n", listen, token)
	for _, p := range provs {
		switch p.cloud {
		case "":
			fmt.Fprintf(&b, "  %s: {type: openai, base_url: %q, keys: [sim-key]}\n", p.name, p.url)
		case "anthropic":
			fmt.Fprintf(&b, "  %s: {type: anthropic, base_url: %q, keys: [sim-key]}\n", p.name, p.root)
		case "bedrock":
			fmt.Fprintf(&b, "  %s: {type: bedrock, region: %s, base_url: %q, aws: {access_key_id: %s, secret_access_key: %s}}\n",
				p.name, demoAWSRegion, p.root, demoAWSKeyID, demoAWSSecret)
		case "vertex":
			fmt.Fprintf(&b, "  %s: {type: vertex, project: %s, region: us-east5, base_url: %q, credentials_file: %q}\n",
				p.name, demoProject, p.root, saFile)
		}
	}
	smart, claude := demoLadders(provs)
	b.WriteString("models:\n")
	for _, l := range []struct {
		name  string
		provs []*demoProvider
	}{{"smart", smart}, {"claude", claude}} {
		fmt.Fprintf(&b, "  - name: %s\n    strategy: fallback\n    targets:\n", l.name)
		for _, p := range l.provs {
			fmt.Fprintf(&b, "      - {provider: %s, model: %s, price: {input: %g, output: %g}}\n", p.name, p.model, p.input, p.output)
		}
		b.WriteString(`    breaker: {window: 10s, min_calls: 5, failure_rate: 0.5, consecutive: 3, open: 3s, open_backoff: 1.5, max_open: 10s, probes: 1}
    retry: {attempts: 2, base: 100ms, max: 1s, budget: 0.2}
    timeouts: {ttfb: 3s, idle: 5s, total: 30s}
`)
	}
	return b.String()
}

func randomToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
