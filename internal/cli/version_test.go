package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
)

func TestVersionLine(t *testing.T) {
	built := func(version string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: version}, Settings: settings}, true
		}
	}
	for _, tc := range []struct {
		read  func() (*debug.BuildInfo, bool)
		stamp stamp
		want  string
	}{
		{built("v1.2.3"), stamp{}, "fusebox v1.2.3 go1.26.8 "},
		{built("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			debug.BuildSetting{Key: "vcs.time", Value: "2026-12-01T15:00:00Z"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			stamp{}, "fusebox (devel) 0123456789ab-dirty (2026-12-01T15:00:00Z) go1.26.8 "},
		{func() (*debug.BuildInfo, bool) { return nil, false }, stamp{}, "fusebox (no build information) go"},
		// An image build: no VCS information, the version and revision
		// stamped from --build-arg.
		{built("(devel)"), stamp{"v1.4.0", "fedcba9876543210fedc"}, "fusebox v1.4.0 fedcba987654 go1.26.8 "},
		{built("(devel)"), stamp{version: "v1.4.0"}, "fusebox v1.4.0 go1.26.8 "},
		{func() (*debug.BuildInfo, bool) { return nil, false }, stamp{"v1.4.0", "abc"}, "fusebox v1.4.0 abc go"},
		// Stamped over VCS facts: of the same revision they stay, of
		// another they go.
		{built("v1.4.0", debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}, debug.BuildSetting{Key: "vcs.time", Value: "T"}),
			stamp{"v1.4.0", "0123456789abcdef0123"}, "fusebox v1.4.0 0123456789ab (T) go1.26.8 "},
		{built("v1.4.0", debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			stamp{"v1.4.0", "ffff"}, "fusebox v1.4.0 ffff go1.26.8 "},
	} {
		if got := versionLine(tc.read, tc.stamp); !strings.HasPrefix(got, tc.want) {
			t.Errorf("versionLine = %q; want it to begin %q", got, tc.want)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := Run(context.Background(), args, &out, &out); err != nil || !strings.HasPrefix(out.String(), "fusebox ") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("fusebox %v: %v %q; want one line of version", args, err, out.String())
		}
	}
}

func TestValidateWithoutAFileSaysHowToUseIt(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "usage: fusebox validate FILE") {
		t.Fatalf("validate with no file: %v", err)
	}
}

func TestHealth(t *testing.T) {
	var code atomic.Int32
	code.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(code.Load())) }))
	defer srv.Close()
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"health", "--url", srv.URL + "/healthz"}, &out, &out); err != nil {
		t.Fatalf("a healthy gateway: %v", err)
	}
	code.Store(http.StatusServiceUnavailable)
	if err := Run(context.Background(), []string{"health", "--url", srv.URL + "/healthz"}, &out, &out); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("an unhealthy gateway: %v", err)
	}
	srv.Close()
	if err := Run(context.Background(), []string{"health", "--url", srv.URL + "/healthz", "--timeout", "500ms"}, &out, &out); err == nil {
		t.Fatal("a gateway that is not there passed its health check")
	}
}

// The reference and the example are the binary's own: someone holding only
// the binary can read them, and the example is a file validate accepts.
func TestConfigReferenceAndExample(t *testing.T) {
	var ref bytes.Buffer
	if err := Run(context.Background(), []string{"config", "reference"}, &ref, &ref); err != nil || !strings.Contains(ref.String(), "models[]") {
		t.Fatalf("config reference: %v\n%.300s", err, ref.String())
	}
	var ex bytes.Buffer
	if err := Run(context.Background(), []string{"config", "example"}, &ex, &ex); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FUSEBOX_KEY_WEB"} {
		t.Setenv(v, "test-"+strings.ToLower(v))
	}
	path := write(t, ex.String())
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"validate", path}, &out, &out); err != nil {
		t.Fatalf("the example does not validate: %v\n%s", err, out.String())
	}
}
