package deploy_test

// The Helm chart in deploy/helm/fusebox, chartObjects by the helm command:
// helm lint, then helm template with the chart's defaults and with each
// testdata/helm/*.values.yaml, compared with the golden files beside them
// (go test ./deploy -run Helm -update rewrites them) and read back to
// check the wiring a cluster would only show at run time.

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const chartDir = "helm/fusebox"

// needHelm returns the helm command: $FUSEBOX_HELM, else helm on PATH. It
// skips the test when there is none, unless FUSEBOX_REQUIRE_HELM=1 (.ci/run
// builds helm and sets it).
func needHelm(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FUSEBOX_HELM"); p != "" {
		return p
	}
	p, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("FUSEBOX_REQUIRE_HELM") == "1" {
			t.Fatal("no helm on PATH or in $FUSEBOX_HELM, and FUSEBOX_REQUIRE_HELM=1")
		}
		t.Skip("no helm on PATH or in $FUSEBOX_HELM (GOFLAGS= go install helm.sh/helm/v3/cmd/helm@v3.22.0)")
	}
	return p
}

// helm runs the helm command with a home of its own and returns its
// standard output.
func helm(t *testing.T, bin string, args ...string) ([]byte, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New(err.Error() + ": " + stderr.String())
	}
	return stdout.Bytes(), nil
}

func TestHelmLint(t *testing.T) {
	bin := needHelm(t)
	for _, values := range []string{"", "testdata/helm/external.values.yaml", "testdata/helm/single.values.yaml"} {
		args := []string{"lint", "--strict", chartDir}
		if values != "" {
			args = append(args, "--values", values)
		}
		if out, err := helm(t, bin, args...); err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// k8sObject is the part of a chartObjects object the test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       yaml.Node         `yaml:"spec"`
}

// chartObjects is helm template's output, by kind and name.
type chartObjects map[string]k8sObject

func (r chartObjects) get(t *testing.T, kind, name string) k8sObject {
	t.Helper()
	o, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("helm template renders no %s %s", kind, name)
	}
	return o
}

func renderChart(t *testing.T, bin, values string) ([]byte, chartObjects) {
	t.Helper()
	args := []string{"template", "fb", chartDir, "--namespace", "ai"}
	if values != "" {
		args = append(args, "--values", values)
	}
	out, err := helm(t, bin, args...)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	objs := chartObjects{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("helm template output: %v", err)
		}
		if o.Kind != "" {
			objs[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	return out, objs
}

func TestHelmTemplateGolden(t *testing.T) {
	bin := needHelm(t)
	for _, tc := range []struct{ values, golden string }{
		{"", "testdata/helm/default.golden.yaml"},
		{"testdata/helm/external.values.yaml", "testdata/helm/external.golden.yaml"},
		{"testdata/helm/single.values.yaml", "testdata/helm/single.golden.yaml"},
	} {
		out, _ := renderChart(t, bin, tc.values)
		if *update {
			if err := os.WriteFile(tc.golden, out, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(tc.golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("helm template with %q differs from %s (go test ./deploy -run HelmTemplateGolden -update rewrites it):\n%s",
				tc.values, tc.golden, firstDiff(string(want), string(out)))
		}
	}
}

// firstDiff shows the first line where got leaves want.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + a + "\n  got  " + b
		}
	}
	return ""
}

// TestHelmWiring reads the chartObjects chart back: the ConfigMap's
// fusebox.yaml starts a gateway with the variables the Secrets give it,
// the probes and the Service reach the port it listens on, the replicas
// share the Redis the chart names, the disruption budget and the
// ServiceMonitor select the gateway's pods, and the PrometheusRule and the
// dashboard ConfigMap carry the shipped files unchanged.
func TestHelmWiring(t *testing.T) {
	bin := needHelm(t)

	_, objs := renderChart(t, bin, "")
	dep := decodeSpec[deploymentSpec](t, objs.get(t, "Deployment", "fb-fusebox"))
	env := map[string]string{}
	for _, ref := range dep.Template.Spec.Containers[0].EnvFrom {
		maps.Copy(env, objs.get(t, "Secret", ref.SecretRef.Name).StringData)
	}
	for k, v := range env {
		if v == "" {
			env[k] = "test-value-of-" + strings.ToLower(k) + "-0123456789abcdef"
		}
	}
	cfg := loadRenderedConfig(t, objs.get(t, "ConfigMap", "fb-fusebox").Data["fusebox.yaml"], env)
	if string(cfg.State) != "redis://fb-fusebox-redis:6379/0" {
		t.Errorf("state %q; want the bundled Redis's service", cfg.State)
	}
	objs.get(t, "Service", "fb-fusebox-redis")
	checkPod(t, dep, cfg)
	checkSelects(t, "PodDisruptionBudget", decodeSpec[selectorSpec](t, objs.get(t, "PodDisruptionBudget", "fb-fusebox")).Selector.MatchLabels, dep)

	_, objs = renderChart(t, bin, "testdata/helm/external.values.yaml")
	if got := objs.get(t, "Secret", "fb-fusebox-state").StringData["FUSEBOX_STATE"]; got != "rediss://fusebox:s3cret@redis.example.com:6380/2" {
		t.Errorf("FUSEBOX_STATE %q; want redis.url", got)
	}
	if _, ok := objs["Deployment/fb-fusebox-redis"]; ok {
		t.Error("redis.url set, yet the bundled Redis is deployed")
	}
	if _, ok := objs["Secret/fb-fusebox-env"]; ok {
		t.Error("secrets.existingSecret set, yet the chart renders a Secret of variables")
	}
	dep = decodeSpec[deploymentSpec](t, objs.get(t, "Deployment", "fb-fusebox"))
	if ref := dep.Template.Spec.Containers[0].EnvFrom[0].SecretRef.Name; ref != "fusebox-keys" {
		t.Errorf("the pods read their variables from Secret %q; want the existing fusebox-keys", ref)
	}
	sm := decodeSpec[serviceMonitorSpec](t, objs.get(t, "ServiceMonitor", "fb-fusebox"))
	checkSelects(t, "ServiceMonitor", sm.Selector.MatchLabels, dep)
	if len(sm.Endpoints) != 1 || sm.Endpoints[0].Path != "/metrics" || sm.Endpoints[0].Port != "http" {
		t.Errorf("ServiceMonitor endpoints %+v; want /metrics on port http", sm.Endpoints)
	}

	var shipped struct {
		Groups []map[string]any `yaml:"groups"`
	}
	readYAML(t, "prometheus/alerts.yml", &shipped)
	rule := decodeSpec[struct {
		Groups []map[string]any `yaml:"groups"`
	}](t, objs.get(t, "PrometheusRule", "fb-fusebox"))
	if len(shipped.Groups) == 0 || !reflect.DeepEqual(rule.Groups, shipped.Groups) {
		t.Error("the PrometheusRule's groups are not those of deploy/prometheus/alerts.yml")
	}
	dashboard, err := os.ReadFile("grafana/fusebox.json")
	if err != nil {
		t.Fatal(err)
	}
	cm := objs.get(t, "ConfigMap", "fb-fusebox-dashboard")
	if cm.Data["fusebox.json"] != strings.TrimRight(string(dashboard), "\n")+"\n" || cm.Metadata.Labels["grafana_dashboard"] != "1" {
		t.Error("the dashboard ConfigMap does not carry deploy/grafana/fusebox.json with the sidecar's grafana_dashboard label")
	}

	// Several replicas with no shared state are refused at render time.
	if _, err := helm(t, bin, "template", "fb", chartDir, "--values", "testdata/helm/fleet-without-state.values.yaml"); err == nil || !strings.Contains(err.Error(), "shared state") {
		t.Errorf("three replicas without Redis: %v; want a refusal naming shared state", err)
	}
}

type deploymentSpec struct {
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Containers []struct {
				Args    []string `yaml:"args"`
				EnvFrom []struct {
					SecretRef struct {
						Name string `yaml:"name"`
					} `yaml:"secretRef"`
				} `yaml:"envFrom"`
				Ports []struct {
					Name          string `yaml:"name"`
					ContainerPort int    `yaml:"containerPort"`
				} `yaml:"ports"`
				LivenessProbe  probe `yaml:"livenessProbe"`
				ReadinessProbe probe `yaml:"readinessProbe"`
				VolumeMounts   []struct {
					MountPath string `yaml:"mountPath"`
				} `yaml:"volumeMounts"`
			} `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type selectorSpec struct {
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
}

type serviceMonitorSpec struct {
	selectorSpec `yaml:",inline"`
	Endpoints    []struct {
		Port string `yaml:"port"`
		Path string `yaml:"path"`
	} `yaml:"endpoints"`
}

func decodeSpec[T any](t *testing.T, o k8sObject) T {
	t.Helper()
	var v T
	if err := o.Spec.Decode(&v); err != nil {
		t.Fatalf("%s %s: spec: %v", o.Kind, o.Metadata.Name, err)
	}
	return v
}

// loadRenderedConfig loads the chart's fusebox.yaml as a pod would, with
// env as its environment, and checks it starts a gateway.
func loadRenderedConfig(t *testing.T, data string, env map[string]string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(data), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the chart's fusebox.yaml with the Secrets' variables %q:\n%v", slices.Sorted(maps.Keys(env)), err)
	}
	if err := gateway.Check(cfg); err != nil {
		t.Fatalf("the chart's fusebox.yaml does not start a gateway: %v", err)
	}
	return cfg
}

// checkPod checks the gateway's container: it serves the mounted file, and
// its probes and named port are the port fusebox.yaml listens on.
func checkPod(t *testing.T, dep deploymentSpec, cfg *config.Config) {
	t.Helper()
	c := dep.Template.Spec.Containers[0]
	if strings.Join(c.Args, " ") != "serve --config /etc/fusebox/fusebox.yaml" || len(c.VolumeMounts) == 0 || c.VolumeMounts[0].MountPath != "/etc/fusebox" {
		t.Errorf("container args %q, mounts %+v; want serve --config /etc/fusebox/fusebox.yaml from the ConfigMap", c.Args, c.VolumeMounts)
	}
	_, port, _ := strings.Cut(cfg.Listen, ":")
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || strconv.Itoa(c.Ports[0].ContainerPort) != port {
		t.Errorf("container ports %+v; fusebox.yaml listens on %s", c.Ports, cfg.Listen)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe.HTTPGet.Port != "http" || c.ReadinessProbe.HTTPGet.Port != "http" {
		t.Errorf("probes %+v, %+v; want /healthz and /readyz on port http", c.LivenessProbe, c.ReadinessProbe)
	}
}

// checkSelects checks that a selector picks the Deployment's pods.
func checkSelects(t *testing.T, what string, sel map[string]string, dep deploymentSpec) {
	t.Helper()
	if len(sel) == 0 {
		t.Errorf("%s selects nothing", what)
	}
	for k, v := range sel {
		if dep.Template.Metadata.Labels[k] != v {
			t.Errorf("%s selects %s=%s; the gateway's pods are labelled %q", what, k, v, dep.Template.Metadata.Labels)
		}
	}
}
