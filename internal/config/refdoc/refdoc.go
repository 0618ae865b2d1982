// Package refdoc writes the reference of the gateway's configuration file,
// docs/CONFIG.md, from the config package itself: the blocks and fields
// from its schema types and their yaml tags, the descriptions from their
// doc comments, the defaults from what config.Parse fills in, and the
// sections of the package doc. config/gen runs it for go generate; the
// config package's tests run it to see that the committed reference is
// current.
//
// A default is the "Default: X." sentence of a field's doc comment, or
// else the value Parse gives a file that leaves the field out. Read checks
// the two against each other: a doc that names a value other than the
// one Parse fills in, or a field that Parse fills in with no "Default:" in
// its doc, is an error, so that the reference cannot drift from the code.
// (Defaults applied later, by the libraries or the gateway, leave the field
// 0 in the Config; only their doc says them.)
package refdoc

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// Schema is the reference of the configuration: its blocks, each with its
// fields, in the order of a file, and the package doc's sections.
type Schema struct {
	// Sections are the blocks: the top level first, then each block the
	// first time a field holds it, depth first.
	Sections []*Section
	// Example is the starting file that config.Example returns.
	Example string

	src *source
}

// Read reads the config package's sources in dir (its example.yaml
// included) and builds its reference. Its error lists every doc comment
// whose default disagrees with the code.
func Read(dir string) (*Schema, error) {
	src, err := readSource(dir)
	if err != nil {
		return nil, err
	}
	example, err := os.ReadFile(filepath.Join(dir, "example.yaml"))
	if err != nil {
		return nil, err
	}
	b := &builder{src: src, sections: map[reflect.Type]*Section{}}
	b.section(reflect.TypeFor[config.Config](), "", Intro{}, "")
	s := &Schema{Sections: b.order, Example: string(example), src: src}
	if err := s.setDefaults(); err != nil {
		return nil, err
	}
	return s, nil
}

// Generate returns the reference of the config package in dir, in
// Markdown: what docs/CONFIG.md holds.
func Generate(dir string) ([]byte, error) {
	s, err := Read(dir)
	if err != nil {
		return nil, err
	}
	return s.Markdown(), nil
}

// errorList joins problems into one error; nil when there are none.
func errorList(problems []string) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New(p)
	}
	return errors.Join(errs...)
}
