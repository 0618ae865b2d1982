package monitoring_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// promtool returns the promtool command. Without one on PATH the test is
// skipped, unless FUSEBOX_REQUIRE_PROMTOOL=1 (as CI sets it) makes that a
// failure.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("FUSEBOX_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed and FUSEBOX_REQUIRE_PROMTOOL=1 (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	return bin
}

// run runs promtool with args in dir and fails the test on an error.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestPromtoolCheckRules(t *testing.T) {
	run(t, filepath.Dir(alertsFile), "check", "rules", filepath.Base(alertsFile))
}

// TestPromtoolTestRules runs alerts_test.yml, and checks that it tests
// every alert of alerts.yml both firing and not firing.
func TestPromtoolTestRules(t *testing.T) {
	data, err := os.ReadFile(alertTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for name := range alertExprs(t) {
		if !fires[name] || !quiet[name] {
			t.Errorf("%s: tested firing %v, not firing %v; want both", name, fires[name], quiet[name])
		}
	}
	run(t, filepath.Dir(alertTestsFile), "test", "rules", filepath.Base(alertTestsFile))
}

// TestPromtoolDashboardQueries has promtool parse every query of the
// dashboard, its Grafana variables replaced by values, as recording rules.
func TestPromtoolDashboardQueries(t *testing.T) {
	bin := promtool(t)
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$target", ".*", "$model", ".*", "$client", ".*")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	exprs := dashboardExprs(readDashboard(t))
	for _, title := range slices.Sorted(maps.Keys(exprs)) {
		for _, e := range exprs[title] {
			rules = append(rules, rule{Record: "dashboard:query_" + strconv.Itoa(len(rules)), Expr: vars.Replace(e)})
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "check", "rules", file).CombinedOutput(); err != nil {
		t.Fatalf("the dashboard's queries do not parse: %v\n%s", err, msg)
	}
}
