package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and parses the configuration file at path, expanding
// environment variables from the process environment. See Parse.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: err.Error()}}
	}
	return Parse(path, data, os.LookupEnv)
}

// Parse parses the YAML configuration data, named name in messages: it
// decodes it, expands environment variables with env (nil: os.LookupEnv),
// fills defaults and validates the result. On any problem it returns a nil
// Config and an Errors listing every problem found, in line order.
func Parse(name string, data []byte, env Env) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	r := &report{file: name, lines: lines{}}
	data, refs := protect(data)
	root, ok := parseYAML(r, data)
	if !ok {
		return nil, r.err()
	}
	c := &Config{File: name, lines: r.lines}
	d := &decoder{r: r, env: env, refs: refs}
	d.decode(root, reflect.ValueOf(c).Elem(), "")
	c.setDefaults()
	c.validate(r)
	if err := r.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseYAML parses data into a node tree, reporting syntax errors and a
// second document. An empty file is an empty document.
func parseYAML(r *report, data []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		syntaxError(r, err)
		return nil, false
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		syntaxError(r, err)
		return nil, false
	default:
		r.at(next.Line, "", "a second YAML document (---): the configuration must be one document")
		return nil, false
	}
	return &root, true
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports an error of the YAML parser at its line.
func syntaxError(r *report, err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.at(n, "", "YAML syntax: "+m[2])
		return
	}
	r.at(0, "", "YAML syntax: "+strings.TrimPrefix(msg, "yaml: "))
}
