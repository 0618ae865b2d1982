package refdoc

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// source is what the config package's Go sources say of its types: their
// doc comments and those of their fields, and the values of the constants
// of its string types.
type source struct {
	pkg    *doc.Package
	types  map[string]*doc.Type
	fields map[string]map[string]string // type → Go field name → doc
	consts map[string][]string          // type → its constants' values
}

// readSource parses the Go files of the package in dir, tests left out.
func readSource(dir string) (*source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/fuseboxhq/fusebox/internal/config")
	if err != nil {
		return nil, err
	}
	s := &source{pkg: pkg, types: map[string]*doc.Type{}, fields: map[string]map[string]string{}, consts: map[string][]string{}}
	for _, t := range pkg.Types {
		s.types[t.Name] = t
		s.fields[t.Name] = fieldDocs(t)
		s.consts[t.Name] = constValues(t)
	}
	return s, nil
}

// fieldDocs returns the doc comments of the fields of the struct type t.
func fieldDocs(t *doc.Type) map[string]string {
	docs := map[string]string{}
	for _, spec := range t.Decl.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			for _, name := range f.Names {
				docs[name.Name] = f.Doc.Text()
			}
		}
	}
	return docs
}

// constValues returns the string values of the constants declared with t.
func constValues(t *doc.Type) []string {
	var values []string
	for _, c := range t.Consts {
		for _, spec := range c.Decl.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						values = append(values, s)
					}
				}
			}
		}
	}
	return values
}

// parse parses a doc comment.
func (s *source) parse(text string) *comment.Doc {
	return s.pkg.Parser().Parse(text)
}
