// Package monitoring_test checks the monitoring files in deploy/: the
// Prometheus alert rules (deploy/prometheus) with promtool, and that every
// metric the rules and the Grafana dashboard (deploy/grafana) query is one
// a running gateway exports.
package monitoring_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The files under test, relative to this directory.
var (
	dashboardFile  = filepath.Join("..", "grafana", "fusebox.json")
	alertsFile     = filepath.Join("..", "prometheus", "alerts.yml")
	alertTestsFile = filepath.Join("..", "prometheus", "alerts_test.yml")
)

// promqlWords are the identifiers of PromQL that are not metric names:
// keywords and binary operators written as words. Functions and
// aggregations are told apart by the "(" after them.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "atan2": true, "offset": true,
	"start": true, "end": true, "inf": true, "nan": true,
}

// labelLists are the keywords followed by a parenthesised list of labels.
var labelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricNames returns the metric names a PromQL expression reads: the
// identifiers outside label matchers, ranges, strings and label lists that
// are not followed by "(" (a function or aggregation) nor PromQL words.
func metricNames(expr string) []string {
	var names []string
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipTo(expr, i, '}')
		case c == '[':
			i = skipTo(expr, i, ']')
		case c == '$': // a Grafana variable: $__rate_interval, ${x}
			i++
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '{' || expr[i] == '}') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word, k := expr[i:j], skipSpace(expr, j)
			switch {
			case labelLists[word] && k < len(expr) && expr[k] == '(':
				j = skipTo(expr, k, ')')
			case k < len(expr) && expr[k] == '(':
				// a function, or an aggregation with its clause after
			case aggregationClause(expr, k):
				// an aggregation with its clause first: sum by (x) (…)
			case !promqlWords[word]:
				names = append(names, word)
			}
			i = j
		case c >= '0' && c <= '9': // numbers and durations: 0.05, 5m, 1e3
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return names
}

// skipSpace returns the index of the first non-space byte from i.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// aggregationClause reports whether s at i is "by (…)" or "without (…)"
// followed by "(": the clause of an aggregation written before its
// argument.
func aggregationClause(s string, i int) bool {
	for _, kw := range []string{"by", "without"} {
		if !strings.HasPrefix(s[i:], kw) {
			continue
		}
		j := skipSpace(s, i+len(kw))
		if j < len(s) && s[j] == '(' {
			j = skipSpace(s, skipTo(s, j, ')'))
			return j < len(s) && s[j] == '('
		}
	}
	return false
}

func isIdentStart(c byte) bool { return c == '_' || c == ':' || c|0x20 >= 'a' && c|0x20 <= 'z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		if s[i] == '\\' && q != '`' {
			i++
		} else if s[i] == q {
			return i + 1
		}
	}
	return i
}

// skipTo returns the index after the close that ends the group opened at
// i, skipping strings inside it.
func skipTo(s string, i int, close byte) int {
	for i++; i < len(s); i++ {
		switch {
		case s[i] == '"' || s[i] == '\'' || s[i] == '`':
			i = skipString(s, i) - 1
		case s[i] == close:
			return i + 1
		}
	}
	return i
}

// labelValues matches a Grafana variable query label_values(metric, label).
var labelValues = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,`)

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Inputs        []struct {
		Name, Type, PluginID string
	} `json:"__inputs"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource json.RawMessage `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title      string          `json:"title"`
	Type       string          `json:"type"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		Expr       string          `json:"expr"`
		Datasource json.RawMessage `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// dashboardExprs returns every PromQL expression of the dashboard's
// panels, by panel title.
func dashboardExprs(d dashboard) map[string][]string {
	out := map[string][]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out[p.Title] = append(out[p.Title], tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// dashboardMetrics returns the metric names the dashboard queries, its
// variables' label_values included.
func dashboardMetrics(d dashboard) []string {
	var names []string
	for _, exprs := range dashboardExprs(d) {
		for _, e := range exprs {
			names = append(names, metricNames(e)...)
		}
	}
	for _, v := range d.Templating.List {
		for _, m := range labelValues.FindAllStringSubmatch(string(v.Query), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// rulesFile is a Prometheus rules file.
type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string `yaml:"alert"`
			Record string `yaml:"record"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// alertExprs returns each alert rule's expression by alert name.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf rulesFile
	if err := yaml.Unmarshal(data, &rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	out := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			out[r.Alert+r.Record] = r.Expr
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`fusebox_state_backend_up == 0`, []string{"fusebox_state_backend_up"}},
		{`sum by (model) (rate(fusebox_requests_total{code=~"5..",model!="by"}[5m])) / sum by (model) (rate(fusebox_requests_total[$__rate_interval])) > 0.05`,
			[]string{"fusebox_requests_total", "fusebox_requests_total"}},
		{`histogram_quantile(0.95, sum by (le, target) (rate(fusebox_upstream_ttfb_seconds_bucket{target=~"$target"}[5m])))`,
			[]string{"fusebox_upstream_ttfb_seconds_bucket"}},
		{`max by (target) (a{state="open"} or b * 2 and on (target) c offset 5m unless ignoring(x) group_left(y) d)`,
			[]string{"a", "b", "c", "d"}},
		{"min by (client, period) (x)\n  <= 0.2 * max_over_time(y[31d]) or vector(1e3)", []string{"x", "y"}},
		{`{__name__="ignored"} + count(z) * 3600`, []string{"z"}},
	} {
		if got := metricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %q; want %q", c.expr, got, c.want)
		}
	}
}

// TestDashboardShape checks what an import needs: a recent schema, the
// Prometheus data source as the DS_PROMETHEUS input, used by every panel
// and query, and a data source variable of the same name for a dashboard
// provisioned from the file.
func TestDashboardShape(t *testing.T) {
	d := readDashboard(t)
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d; want 39 or later", d.SchemaVersion)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs %+v; want the one prometheus datasource DS_PROMETHEUS", d.Inputs)
	}
	ds := `{"type":"prometheus","uid":"${DS_PROMETHEUS}"}`
	same := func(raw json.RawMessage) bool {
		var a, b any
		return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(ds), &b) == nil && equalJSON(a, b)
	}
	exprs := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if !same(p.Datasource) {
			t.Errorf("panel %q: datasource %s; want %s", p.Title, p.Datasource, ds)
		}
		for _, tg := range p.Targets {
			exprs++
			if !same(tg.Datasource) || strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q: a query with datasource %s and expr %q", p.Title, tg.Datasource, tg.Expr)
			}
		}
	}
	picker := false
	for _, v := range d.Templating.List {
		if v.Type == "datasource" {
			// The data source picker named like the input: a provisioned
			// dashboard (no import step) resolves ${DS_PROMETHEUS} through it.
			picker = v.Name == "DS_PROMETHEUS" && string(v.Query) == `"prometheus"`
			continue
		}
		if !same(v.Datasource) {
			t.Errorf("variable %s: datasource %s; want %s", v.Name, v.Datasource, ds)
		}
	}
	if exprs < 20 {
		t.Errorf("%d queries; the dashboard should have its panels", exprs)
	}
	if !picker {
		t.Error(`no prometheus data source variable DS_PROMETHEUS: a provisioned dashboard cannot resolve ${DS_PROMETHEUS}`)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
