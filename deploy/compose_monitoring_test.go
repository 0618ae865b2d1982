package deploy_test

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The services of deploy/compose.yaml around the replicas, checked by
// reading the files they mount (docker does not run in the tests): the load
// balancer reaches every replica, Prometheus loads the shipped alert rules,
// and Grafana has Prometheus as its data source and the dashboard
// provisioned.

var (
	nginxUpstream = regexp.MustCompile(`(?s)upstream\s+(\S+)\s*\{(.*?)\}`)
	nginxServer   = regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+)`)
	nginxPass     = regexp.MustCompile(`proxy_pass\s+http://([^\s;/]+)`)
	nginxListen   = regexp.MustCompile(`(?m)^\s*listen\s+(\d+)\s*;`)
)

func TestComposeLoadBalancer(t *testing.T) {
	var compose composeFile
	readYAML(t, "compose.yaml", &compose)
	replicas := composeReplicas(compose)
	lb, ok := compose.Services["lb"]
	if !ok {
		t.Fatal("compose.yaml: no lb service in front of the replicas")
	}
	conf, ok := lb.mount("/etc/nginx/nginx.conf")
	if !ok {
		t.Fatal("compose.yaml: lb mounts no /etc/nginx/nginx.conf")
	}
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	up := nginxUpstream.FindSubmatch(data)
	pass := nginxPass.FindSubmatch(data)
	if up == nil || pass == nil || string(pass[1]) != string(up[1]) {
		t.Fatalf("%s: no proxy_pass to its upstream block", conf)
	}
	var servers []string
	for _, m := range nginxServer.FindAllSubmatch(up[2], -1) {
		servers = append(servers, string(m[1]))
	}
	var want []string
	for _, r := range replicas {
		want = append(want, net.JoinHostPort(r, "8080"))
	}
	slices.Sort(servers)
	if !slices.Equal(servers, want) {
		t.Errorf("%s balances across %q; want every replica, %q", conf, servers, want)
	}
	if !bytes.Contains(data, []byte("proxy_buffering off;")) {
		t.Errorf("%s buffers answers: streams would not pass event by event", conf)
	}
	listen := nginxListen.FindSubmatch(data)
	if listen == nil || !slices.ContainsFunc(lb.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+string(listen[1])) }) {
		t.Errorf("compose.yaml: lb publishes %q, not the port nginx listens on (%s)", lb.Ports, listen)
	}
}

// composeReplicas names the gateway services: built from the Dockerfile,
// running its own command.
func composeReplicas(c composeFile) []string {
	var replicas []string
	for name, s := range c.Services {
		if s.Build["context"] == ".." && s.Command == nil {
			replicas = append(replicas, name)
		}
	}
	slices.Sort(replicas)
	return replicas
}

func TestComposePrometheusLoadsRules(t *testing.T) {
	var compose composeFile
	readYAML(t, "compose.yaml", &compose)
	prom := compose.Services["prometheus"]
	const promConfig = "/etc/prometheus/prometheus.yml"
	file, ok := prom.mount(promConfig)
	if !ok {
		t.Fatal("compose.yaml: prometheus has no prometheus.yml mounted")
	}
	var cfg struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	readYAML(t, file, &cfg)
	if len(cfg.RuleFiles) == 0 {
		t.Fatalf("%s has no rule_files: the shipped alert rules are never loaded", file)
	}
	shipped, err := os.ReadFile(filepath.Join("prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rf := range cfg.RuleFiles {
		in := rf
		if !path.IsAbs(in) {
			in = path.Join(path.Dir(promConfig), rf) // relative to the configuration file
		}
		host, ok := prom.mount(in)
		if !ok {
			t.Errorf("%s: rule file %s is %s in the container, where compose.yaml mounts nothing", file, rf, in)
			continue
		}
		got, err := os.ReadFile(host)
		if err != nil {
			t.Error(err)
		} else if !bytes.Equal(got, shipped) {
			t.Errorf("%s loads %s, which is not deploy/prometheus/alerts.yml", file, host)
		}
	}
}

func TestComposeGrafana(t *testing.T) {
	var compose composeFile
	readYAML(t, "compose.yaml", &compose)
	g, ok := compose.Services["grafana"]
	if !ok {
		t.Fatal("compose.yaml: no grafana service")
	}
	prov, ok := g.mount("/etc/grafana/provisioning")
	if !ok {
		t.Fatal("compose.yaml: grafana has no /etc/grafana/provisioning mounted")
	}

	var ds struct {
		Datasources []struct {
			Type, URL string
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(prov, "datasources", "prometheus.yml"), &ds)
	promPort := ""
	for _, p := range compose.Services["prometheus"].Ports {
		promPort = p[strings.LastIndex(p, ":")+1:]
	}
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" {
		t.Fatalf("grafana data sources %+v; want the one Prometheus", ds.Datasources)
	}
	u, err := url.Parse(ds.Datasources[0].URL)
	if err != nil || u.Hostname() != "prometheus" || u.Port() != promPort {
		t.Errorf("grafana's data source %s; want the prometheus service on %s", ds.Datasources[0].URL, promPort)
	}

	var dash struct {
		Providers []struct {
			Type    string
			Options struct{ Path string }
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(prov, "dashboards", "fusebox.yml"), &dash)
	if len(dash.Providers) != 1 || dash.Providers[0].Type != "file" {
		t.Fatalf("grafana dashboard providers %+v; want one of type file", dash.Providers)
	}
	dir := dash.Providers[0].Options.Path
	host, ok := g.mount(path.Join(dir, "fusebox.json"))
	if !ok || filepath.Clean(host) != filepath.Join("grafana", "fusebox.json") {
		t.Errorf("compose.yaml: grafana mounts %q at %s/fusebox.json; want grafana/fusebox.json, the shipped dashboard", host, dir)
	}
}
