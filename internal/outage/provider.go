package outage

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Prices of the two targets, in US dollars per million tokens.
var (
	primaryPrice   = price{input: 15, output: 75}
	secondaryPrice = price{input: 2, output: 8}
)

// price is what a target costs, in US dollars per million tokens.
type price struct{ input, output float64 }

// cost is the price of u.
func (p price) cost(u usage) float64 {
	return (float64(u.in)*p.input + float64(u.out)*p.output) / 1e6
}

// provider is a simulated provider served on a loopback listener, with a
// log of the API calls it answered. It is safe for concurrent use.
type provider struct {
	name string
	sim  *sim.Server
	srv  *http.Server
	// root is the server's root URL; url is the API root, root + "/v1".
	root, url string

	// mu guards calls.
	mu    sync.Mutex
	calls []call
}

// call is one API call a provider received: when it arrived, when it
// ended (zero while it runs) and the status of its answer (0 while it
// runs, or if it got none).
type call struct {
	at, end time.Time
	status  int
}

// simConfig is the configuration of a simulated provider of the run (the
// cross-cloud scenario's also verify SigV4 signatures against the
// run's AWS keys).
func simConfig(o Options, name string, seed uint64) sim.Config {
	c := sim.Config{
		Name:    name,
		Seed:    o.Seed*2 + seed,
		Latency: sim.Latency{Median: o.Latency, P99: o.P99},
		Output:  sim.Output{Tokens: 40},
	}
	if o.Scenario.crossCloud() {
		c.AWS = simAWS()
	}
	return c
}

// startProvider starts a simulated provider for c on a loopback port.
func startProvider(c sim.Config) (*provider, error) {
	s, err := sim.New(c)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	root := "http://" + ln.Addr().String()
	p := &provider{name: c.Name, sim: s, root: root, url: root + "/v1"}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// ServeHTTP passes the request to the simulator and logs API calls: those
// under /v1/ and Bedrock's, under /model/.
func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/model/") {
		p.sim.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	p.mu.Lock()
	i := len(p.calls)
	p.calls = append(p.calls, call{at: time.Now()})
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.calls[i].status, p.calls[i].end = sw.status, time.Now()
		p.mu.Unlock()
	}()
	p.sim.ServeHTTP(sw, r)
}

// callsIn counts the calls that arrived from from (included) to to
// (excluded).
func (p *provider) callsIn(from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if !c.at.Before(from) && c.at.Before(to) {
			n++
		}
	}
	return n
}

// endedBy counts the calls that arrived at or after from and had ended
// before by.
func (p *provider) endedBy(from, by time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if !c.at.Before(from) && !c.end.IsZero() && c.end.Before(by) {
			n++
		}
	}
	return n
}

// firstOK returns how long after t the first call that arrived at or after
// t and was answered 200 arrived; ok is false when none did.
func (p *provider) firstOK(t time.Time) (d time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.calls {
		if c.status == http.StatusOK && !c.at.Before(t) && (!ok || c.at.Sub(t) < d) {
			d, ok = c.at.Sub(t), true
		}
	}
	return d, ok
}

// close stops the server, releasing hung calls first.
func (p *provider) close() {
	p.sim.Close()
	p.srv.Close()
}

// statusWriter remembers the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (for flushes
// and resets).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
