package deploy_test

import (
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// composeFile is the part of deploy/compose.yaml the test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Build       map[string]string `yaml:"build"`
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
}

// mount returns the host file (relative to deploy/) mounted at target.
func (s composeService) mount(target string) (string, bool) {
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == target {
			return parts[0], true
		}
	}
	return "", false
}

// flag returns the value of a --name flag of the service's command.
func (s composeService) flag(name string) string {
	if i := slices.Index(s.Command, name); i >= 0 && i+1 < len(s.Command) {
		return s.Command[i+1]
	}
	return ""
}

// prometheusFile is the part of deploy/prometheus.yml the test reads.
type prometheusFile struct {
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// composeVar matches compose's ${NAME}, ${NAME:-default} and ${NAME:?message}.
var composeVar = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)(.*))?\}$`)

// composeEnv returns a replica's environment as the container sees it: a
// required variable (${X:?…}) gets a test value, a defaulted one its
// default, a literal itself.
func composeEnv(t *testing.T, s composeService) map[string]string {
	t.Helper()
	env := map[string]string{}
	for k, v := range s.Environment {
		m := composeVar.FindStringSubmatch(v)
		switch {
		case m == nil && strings.Contains(v, "$"):
			t.Fatalf("compose.yaml: environment %s: %q is not a form the test knows", k, v)
		case m == nil:
			env[k] = v
		case m[2] == ":-":
			env[k] = m[3]
		default:
			env[k] = "test-" + strings.ToLower(k)
		}
	}
	return env
}

// TestComposeFleet checks deploy/compose.yaml against the files it uses:
// each replica runs the image's command with deploy/fusebox.yaml mounted
// where that command reads it, and that file, with only the environment
// compose gives the replicas, loads and would start a gateway; the fleet
// state and the providers are services of the file; Prometheus scrapes
// every replica's /metrics; the simulated providers' scenarios load.
func TestComposeFleet(t *testing.T) {
	var compose composeFile
	readYAML(t, "compose.yaml", &compose)
	image := imageCommand(t)
	configPath := image[slices.Index(image, "--config")+1]

	replicas := composeReplicas(compose)
	if len(replicas) < 2 {
		t.Fatalf("compose.yaml: replicas %q; want a fleet of at least two gateways built from the Dockerfile", replicas)
	}

	first := compose.Services[replicas[0]]
	host, ok := first.mount(configPath)
	if !ok {
		t.Fatalf("compose.yaml: %s mounts nothing at %s, the file the image's command serves", replicas[0], configPath)
	}
	for _, name := range replicas[1:] {
		s := compose.Services[name]
		if h, _ := s.mount(configPath); h != host {
			t.Errorf("compose.yaml: %s mounts %q at %s; %s mounts %q", name, h, configPath, replicas[0], host)
		}
		if !maps.Equal(s.Environment, first.Environment) {
			t.Errorf("compose.yaml: %s's environment differs from %s's", name, replicas[0])
		}
	}

	// The configuration, read with the replicas' environment and nothing
	// else, then as fusebox serve reads it.
	env := composeEnv(t, first)
	data, err := os.ReadFile(host)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(host, data, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("%s with the replicas' environment %q:\n%v", host, env, err)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	if cfg, err = config.Load(host); err != nil {
		t.Fatalf("config.Load(%s): %v", host, err)
	}
	if err := gateway.Check(cfg); err != nil {
		t.Fatalf("%s does not start a gateway: %v", host, err)
	}

	state, err := url.Parse(string(cfg.State))
	if err != nil || state.Scheme != "redis" {
		t.Fatalf("%s: state %q; want the fleet's redis://", host, cfg.State)
	}
	if _, ok := compose.Services[state.Hostname()]; !ok {
		t.Errorf("%s: state %s names no service of compose.yaml", host, cfg.State)
	}
	_, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if h, _, _ := net.SplitHostPort(cfg.Listen); net.ParseIP(h) == nil || net.ParseIP(h).IsLoopback() {
		t.Errorf("%s: listen %s; in a container it must listen beyond loopback", host, cfg.Listen)
	}
	if exposed := only(t, readDockerfile(t), "EXPOSE").args; exposed != port {
		t.Errorf("%s listens on port %s; the Dockerfile exposes %s", host, port, exposed)
	}
	for _, name := range replicas {
		if !slices.ContainsFunc(compose.Services[name].Ports, func(p string) bool { return strings.HasSuffix(p, ":"+port) }) {
			t.Errorf("compose.yaml: %s publishes %q, not the gateway's port %s", name, compose.Services[name].Ports, port)
		}
	}

	// The providers are the simulated ones of the file, on their ports.
	for name, p := range cfg.Providers {
		u, err := url.Parse(p.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		mock, ok := compose.Services[u.Hostname()]
		if !ok {
			continue // a real provider, reached over the network
		}
		if _, mp, _ := net.SplitHostPort(mock.flag("--listen")); len(mock.Command) == 0 || mock.Command[0] != "mock" || mp != u.Port() {
			t.Errorf("provider %s at %s: service %s runs %q", name, p.BaseURL, u.Hostname(), mock.Command)
		}
		scenario, ok := mock.mount(mock.flag("--scenario"))
		if !ok {
			t.Errorf("compose.yaml: %s's --scenario %s is not mounted", u.Hostname(), mock.flag("--scenario"))
			continue
		}
		if _, err := sim.LoadScenario(scenario); err != nil {
			t.Errorf("%s: %v", scenario, err)
		}
	}

	// Prometheus scrapes each replica's /metrics on the gateway's port.
	prom, ok := compose.Services["prometheus"]
	if !ok {
		t.Fatal("compose.yaml: no prometheus service")
	}
	promFile, ok := prom.mount("/etc/prometheus/prometheus.yml")
	if !ok {
		t.Fatal("compose.yaml: prometheus has no prometheus.yml mounted")
	}
	var scrape prometheusFile
	readYAML(t, filepath.Clean(promFile), &scrape)
	var targets []string
	for _, sc := range scrape.ScrapeConfigs {
		if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			t.Errorf("%s: job %s scrapes %s; the gateway serves /metrics", promFile, sc.JobName, sc.MetricsPath)
		}
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	var want []string
	for _, name := range replicas {
		want = append(want, net.JoinHostPort(name, port))
	}
	slices.Sort(targets)
	if !slices.Equal(targets, want) {
		t.Errorf("%s scrapes %q; want every replica, %q", promFile, targets, want)
	}
}
