package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"

	"gopkg.in/yaml.v3"
)

// Load reads and parses the configuration file at path, expanding
// environment variables from the process environment. See Parse. A file
// that cannot be read is one plain error (wrapping the reason, e.g.
// fs.ErrNotExist), not an Errors.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
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
	r := newReport(name)
	data, refs := protect(data)
	root, ok := parseYAML(r, data, refs)
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
func parseYAML(r *report, data []byte, refs []string) (*yaml.Node, bool) {
	root, next, err := parseDocuments(data)
	switch {
	case err != nil:
		syntaxError(r, data, refs, err)
		return nil, false
	case next != nil:
		r.at(next.Line, "", "a second YAML document (---): the configuration must be one document")
		return nil, false
	}
	return root, true
}

// parseDocuments parses the first YAML document of data, and the start of
// a second one if there is one (nil otherwise).
func parseDocuments(data []byte) (root, next *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	root = &yaml.Node{}
	if err := dec.Decode(root); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	next = &yaml.Node{}
	switch err := dec.Decode(next); {
	case errors.Is(err, io.EOF):
		return root, nil, nil
	case err != nil:
		return nil, nil, err
	}
	return root, next, nil
}

// readError is the one-line error for a file that cannot be read: not an
// Errors, since there is no line to point at, and naming the file once
// ("open FILE: …" would name it again).
func readError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read the configuration file %s: %w", path, err)
}
