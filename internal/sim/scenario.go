package sim

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ScenarioError is one thing wrong with a scenario file, at a line.
type ScenarioError struct {
	// File is the scenario's name, as given to LoadScenario or ParseScenario.
	File string
	// Line is the 1-based line of the offending value; 0 when unknown.
	Line int
	// Field is the path of the field, e.g. faults[1].status; empty for
	// errors about the file as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error formats e as "file:line: field: msg", leaving out what is unknown.
func (e ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ScenarioErrors are all the things wrong with a scenario, in line order.
// LoadScenario and ParseScenario return them as their error; errors.As
// retrieves the list.
type ScenarioErrors []ScenarioError

// Error returns one error per line.
func (es ScenarioErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// LoadScenario reads a scenario file (the format is in the package
// documentation) and returns its Config, or ScenarioErrors naming the line
// and field of every problem. The Config's Clock and Start are left zero.
func LoadScenario(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("sim: %w", err)
	}
	return ParseScenario(path, data)
}

// ParseScenario parses a scenario from data; name is the file name used in
// errors.
func ParseScenario(name string, data []byte) (Config, error) {
	d := &scenarioDecoder{file: name, lines: map[string]int{}}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line := 0
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if _, rest, ok := strings.Cut(msg, "line "); ok {
			num, after, _ := strings.Cut(rest, ":")
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, strings.TrimSpace(after)
			}
		}
		return Config{}, ScenarioErrors{{File: name, Line: line, Msg: "bad YAML: " + msg}}
	}
	n := resolve(&root)
	if n == nil {
		return Config{}, ScenarioErrors{{File: name, Msg: "empty scenario"}}
	}
	var c Config
	d.config(n, &c)
	for _, p := range c.problems() {
		d.field(p.field, p.msg)
	}
	if len(d.errs) > 0 {
		slices.SortStableFunc(d.errs, func(a, b ScenarioError) int { return cmp.Compare(a.Line, b.Line) })
		return Config{}, d.errs
	}
	return c, nil
}

// scenarioDecoder fills a Config from a YAML node tree, recording the line
// of every field set, and reports every problem it meets.
type scenarioDecoder struct {
	file  string
	lines map[string]int // field path → line of its key
	errs  ScenarioErrors
}

func (d *scenarioDecoder) at(line int, field, msg string) {
	d.errs = append(d.errs, ScenarioError{File: d.file, Line: line, Field: field, Msg: msg})
}

// field reports a problem with field at the line where it, or its nearest
// enclosing field, was set; a field that already has an error gets no
// second one.
func (d *scenarioDecoder) field(field, msg string) {
	for _, e := range d.errs {
		if e.Field == field {
			return
		}
	}
	line := 0
	for p := field; ; {
		if n, ok := d.lines[p]; ok {
			line = n
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	d.at(line, field, msg)
}

func (d *scenarioDecoder) config(n *yaml.Node, c *Config) {
	d.mapping(n, "", func(name string, v *yaml.Node, p string) bool {
		switch name {
		case "name":
			d.str(v, p, &c.Name)
		case "seed":
			d.seed(v, p, &c.Seed)
		case "latency":
			d.mapping(v, p, func(name string, v *yaml.Node, p string) bool {
				switch name {
				case "median":
					d.duration(v, p, &c.Latency.Median)
				case "p99":
					d.duration(v, p, &c.Latency.P99)
				case "ttfb":
					d.duration(v, p, &c.Latency.TTFB)
				case "tokens_per_second":
					d.float(v, p, &c.Latency.TokensPerSecond)
				default:
					return false
				}
				return true
			}, "median", "p99", "ttfb", "tokens_per_second")
		case "output":
			d.mapping(v, p, func(name string, v *yaml.Node, p string) bool {
				switch name {
				case "tokens":
					d.integer(v, p, &c.Output.Tokens)
				case "chunk_tokens":
					d.integer(v, p, &c.Output.ChunkTokens)
				case "dimensions":
					d.integer(v, p, &c.Output.Dimensions)
				default:
					return false
				}
				return true
			}, "tokens", "chunk_tokens", "dimensions")
		case "limits":
			d.mapping(v, p, func(name string, v *yaml.Node, p string) bool {
				switch name {
				case "rpm":
					d.integer(v, p, &c.Limits.RPM)
				case "tpm":
					d.integer(v, p, &c.Limits.TPM)
				case "headers_only":
					d.boolean(v, p, &c.Limits.HeadersOnly)
				default:
					return false
				}
				return true
			}, "rpm", "tpm", "headers_only")
		case "jobs":
			d.mapping(v, p, func(name string, v *yaml.Node, p string) bool {
				switch name {
				case "queue_time":
					d.duration(v, p, &c.Jobs.QueueTime)
				case "run_time":
					d.duration(v, p, &c.Jobs.RunTime)
				case "max_queued":
					d.integer(v, p, &c.Jobs.MaxQueued)
				case "content_bytes":
					var n int
					d.integer(v, p, &n)
					c.Jobs.ContentBytes = int64(n)
				default:
					return false
				}
				return true
			}, "queue_time", "run_time", "max_queued", "content_bytes")
		case "models":
			d.list(v, p, func(v *yaml.Node, p string) {
				var m string
				d.str(v, p, &m)
				c.Models = append(c.Models, m)
			})
		case "faults":
			d.list(v, p, func(v *yaml.Node, p string) {
				c.Faults = append(c.Faults, d.fault(v, p))
			})
		case "aws":
			d.aws(v, p, &c.AWS)
		case "google":
			d.google(v, p, &c.Google)
		case "azure":
			d.mapping(v, p, func(name string, v *yaml.Node, p string) bool {
				if name != "keys" {
					return false
				}
				d.strings(v, p, &c.Azure.Keys)
				return true
			}, "keys")
		default:
			return false
		}
		return true
	}, "name", "seed", "latency", "output", "limits", "jobs", "models", "faults", "aws", "google", "azure")
}

func (d *scenarioDecoder) aws(n *yaml.Node, path string, a *AWS) {
	d.mapping(n, path, func(name string, v *yaml.Node, p string) bool {
		switch name {
		case "region":
			d.str(v, p, &a.Region)
		case "keys":
			d.stringMap(v, p, &a.Keys)
		case "api_keys":
			d.strings(v, p, &a.APIKeys)
		case "credential_lifetime":
			d.duration(v, p, &a.CredentialLifetime)
		case "container_token":
			d.str(v, p, &a.ContainerToken)
		default:
			return false
		}
		return true
	}, "region", "keys", "api_keys", "credential_lifetime", "container_token")
}

func (d *scenarioDecoder) google(n *yaml.Node, path string, g *Google) {
	d.mapping(n, path, func(name string, v *yaml.Node, p string) bool {
		switch name {
		case "api_keys":
			d.strings(v, p, &g.APIKeys)
		case "service_accounts":
			d.stringMap(v, p, &g.ServiceAccounts)
		case "refresh_tokens":
			d.strings(v, p, &g.RefreshTokens)
		case "token_lifetime":
			d.duration(v, p, &g.TokenLifetime)
		case "project":
			d.str(v, p, &g.Project)
		case "email":
			d.str(v, p, &g.Email)
		default:
			return false
		}
		return true
	}, "api_keys", "service_accounts", "refresh_tokens", "token_lifetime", "project", "email")
}

// strings reads a list of strings.
func (d *scenarioDecoder) strings(n *yaml.Node, path string, v *[]string) {
	d.list(n, path, func(n *yaml.Node, p string) {
		var s string
		d.str(n, p, &s)
		*v = append(*v, s)
	})
}

// stringMap reads a mapping of strings to strings.
func (d *scenarioDecoder) stringMap(n *yaml.Node, path string, v *map[string]string) {
	d.mapping(n, path, func(name string, n *yaml.Node, p string) bool {
		var s string
		d.str(n, p, &s)
		if *v == nil {
			*v = map[string]string{}
		}
		(*v)[name] = s
		return true
	})
}

func (d *scenarioDecoder) fault(n *yaml.Node, path string) Fault {
	var f Fault
	d.mapping(n, path, func(name string, v *yaml.Node, p string) bool {
		switch name {
		case "kind":
			var s string
			d.str(v, p, &s)
			f.Kind = FaultKind(s)
		case "from":
			d.duration(v, p, &f.From)
		case "to":
			d.duration(v, p, &f.To)
		case "every":
			d.duration(v, p, &f.Every)
		case "for":
			d.duration(v, p, &f.For)
		case "fraction":
			if d.float(v, p, &f.Fraction) && f.Fraction == 0 {
				d.at(v.Line, p, "is 0, want more than 0 (leave it out for every call)")
			}
		case "status":
			d.integer(v, p, &f.Status)
		case "retry_after":
			d.duration(v, p, &f.RetryAfter)
		case "extra":
			d.duration(v, p, &f.Extra)
		case "after_chunks":
			d.integer(v, p, &f.AfterChunks)
		case "message":
			d.str(v, p, &f.Message)
		case "code":
			d.str(v, p, &f.Code)
		default:
			return false
		}
		return true
	}, "kind", "from", "to", "every", "for", "fraction", "status", "retry_after", "extra", "after_chunks", "message", "code")
	return f
}

// mapping walks the entries of mapping n, recording their lines and
// calling fn for each; fn reports false for an unknown field, which is
// then reported with the known ones. Duplicate keys are reported too.
func (d *scenarioDecoder) mapping(n *yaml.Node, path string, fn func(name string, v *yaml.Node, p string) bool, known ...string) {
	if n = resolve(n); n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.at(n.Line, path, "want a mapping, got "+describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.at(k.Line, p, "set twice (first on line "+strconv.Itoa(first)+")")
			continue
		}
		seen[k.Value] = k.Line
		d.lines[p] = k.Line
		if v = resolve(v); v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
			continue // an empty value leaves the field unset
		}
		if !fn(k.Value, v, p) {
			d.at(k.Line, p, "unknown field (known: "+strings.Join(known, ", ")+")")
		}
	}
}

func (d *scenarioDecoder) list(n *yaml.Node, path string, fn func(v *yaml.Node, p string)) {
	if n.Kind != yaml.SequenceNode {
		d.at(n.Line, path, "want a list, got "+describe(n))
		return
	}
	for i, item := range n.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		d.lines[p] = item.Line
		if item = resolve(item); item != nil {
			fn(item, p)
		}
	}
}

// scalar returns n's value, or reports that it is not a scalar; want
// names the expected type.
func (d *scenarioDecoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.at(n.Line, path, "want "+want+", got "+describe(n))
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}

func (d *scenarioDecoder) str(n *yaml.Node, path string, v *string) {
	if s, ok := d.scalar(n, path, "a string"); ok {
		*v = s
	}
}

func (d *scenarioDecoder) duration(n *yaml.Node, path string, v *time.Duration) {
	s, ok := d.scalar(n, path, "a duration")
	if !ok {
		return
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.at(n.Line, path, "bad duration "+strconv.Quote(s)+" (want a number and a unit: 200ms, 5s, 2m)")
		return
	}
	*v = dur
}

func (d *scenarioDecoder) integer(n *yaml.Node, path string, v *int) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return
	}
	i, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		d.at(n.Line, path, "want a whole number, got "+strconv.Quote(s))
		return
	}
	*v = int(i)
}

func (d *scenarioDecoder) seed(n *yaml.Node, path string, v *uint64) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return
	}
	i, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		d.at(n.Line, path, "want a whole number from 0 to 2^64-1, got "+strconv.Quote(s))
		return
	}
	*v = i
}

// float reads a number and reports whether it did.
func (d *scenarioDecoder) float(n *yaml.Node, path string, v *float64) bool {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.at(n.Line, path, "want a number, got "+strconv.Quote(s))
		return false
	}
	*v = f
	return true
}

func (d *scenarioDecoder) boolean(n *yaml.Node, path string, v *bool) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return
	}
	switch s {
	case "true", "True", "TRUE":
		*v = true
	case "false", "False", "FALSE":
		*v = false
	default:
		d.at(n.Line, path, "want true or false, got "+strconv.Quote(s))
	}
}

// resolve follows aliases and enters the document; nil for an empty file
// or an alias chain too long.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return resolve(n.Content[0])
	}
	if n != nil && (n.Kind == yaml.AliasNode || n.Kind == 0) {
		return nil
	}
	return n
}

// describe names a node's kind for "want …, got …" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}
