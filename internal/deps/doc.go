// Package deps holds the test that keeps the library zone (the module root's
// packages) free of dependencies outside the standard library.
package deps
