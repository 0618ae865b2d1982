package router

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

func TestHeaderText(t *testing.T) {
	long := strings.Repeat("a", maxReason+10)
	for _, c := range []struct{ in, want string }{
		{"503 outage (server_error)", "503 outage (server_error)"},
		{"", ""},
		{"\u00fcberlastet", "?berlastet"},
		{"a\r\nX-Evil: 1", "a??X-Evil: 1"},
		{"nul\x00del\x7f", "nul?del?"},
		{"bad \xff\xfe utf-8", "bad ?? utf-8"},
		{"emoji \U0001F600", "emoji ?"},
		{long, long[:maxReason]},
		{strings.Repeat("\u00fc", maxReason), strings.Repeat("?", maxReason)},
	} {
		if got := headerText(c.in); got != c.want {
			t.Errorf("headerText(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// headerSafe fails unless s is printable ASCII of a bounded length.
func headerSafe(t *testing.T, what, s string) {
	t.Helper()
	if len(s) > maxReason+maxDirectName {
		t.Errorf("%s is %d bytes long", what, len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			t.Fatalf("%s %q has byte %#x at %d", what, s, s[i], i)
		}
	}
}

// A hostile upstream's error body cannot put anything but printable
// ASCII into the skip reasons (X-Fusebox-Tried), escaped or raw.
func TestHostileUpstreamCodesStayASCII(t *testing.T) {
	bodies := []string{
		`{"error":{"code":"\u00fcberlastet","message":"x"}}`,
		`{"error":{"code":"überlastet"}}`,
		`{"error":{"code":"a\r\nX-Evil:1"}}`,
		`{"error":{"code":"a\u000d\u000aX-Evil:1"}}`,
		`{"error":{"type":"ok","type":"\u0000\u007f"}}`,
		`{"error":{"code":"` + strings.Repeat("\u00e9", 40) + `"}}`,
		`{"error":{"code":"` + strings.Repeat("x", 10000) + `"}}`,
		`{"error":{"code":"\xff\xfe"}}`,
		"\x00\x01garbage\r\n",
	}
	for _, body := range bodies {
		up := withBody(503, func(context.Context) io.ReadCloser { return io.NopCloser(strings.NewReader(body)) })
		a, b := newStub(up), newStub(up)
		aliases, provs := two(AliasSpec{Retry: retry.Policy{Attempts: 1}}, a, b)
		r := build(t, clocktest.New(time.Time{}), nil, aliases, provs...)
		_, err := start(t, r, "smart", nil).Next(t.Context())
		nt, ok := err.(*NoTargetError)
		if !ok || len(nt.Skips) != 2 {
			t.Fatalf("body %q: %v; want a NoTargetError with both targets", body, err)
		}
		for _, s := range nt.Skips {
			headerSafe(t, "reason", s.Reason)
			headerSafe(t, "target", s.Target)
		}
	}
}

// A target's refusal of a request field names the client's field in the
// reason: a hostile field name is made header-safe too.
func TestUnservableFieldNameStaysASCII(t *testing.T) {
	refuse := func(ctx context.Context, c *Call) (*http.Response, error) {
		return nil, &Unservable{Param: "\u00fc\r\nX-Evil: 1" + strings.Repeat("z", 500), Code: "unsupported_parameter", Message: "no"}
	}
	aliases, provs := two(AliasSpec{}, newStub(refuse), newStub(refuse))
	r := build(t, clocktest.New(time.Time{}), nil, aliases, provs...)
	_, err := start(t, r, "smart", nil).Next(t.Context())
	nt, ok := err.(*NoTargetError)
	if !ok || nt.Unservable == nil {
		t.Fatalf("%v; want every target's refusal", err)
	}
	for _, s := range nt.Skips {
		headerSafe(t, "reason", s.Reason)
		if !strings.HasPrefix(s.Reason, "cannot serve ???X-Evil: 1zz") {
			t.Errorf("reason %q; want the field's name with '?' for what is not ASCII", s.Reason)
		}
	}
}

// A "provider/model" a client names becomes a target's name, sent in
// X-Fusebox-Target: one that is not printable ASCII, or too long, names
// no model.
func TestDirectNameMustBePrintableASCII(t *testing.T) {
	r := build(t, clocktest.New(time.Time{}), nil, nil, ProviderSpec{Name: "p", Upstream: newStub(status(200))})
	for _, m := range []string{"p/\u00fcber", "p/a\r\nX-Evil: 1", "p/a\x00", "p/\x7f", "p/" + strings.Repeat("m", maxDirectName)} {
		if _, ok := r.Lookup(m); ok {
			t.Errorf("Lookup(%q) found a model", m)
		}
	}
	if _, ok := r.Lookup("p/gpt-4.1-mini:free"); !ok {
		t.Error("Lookup of a printable direct name found nothing")
	}
	if n := len(r.Targets()); n != 1 {
		t.Errorf("%d targets; want only the printable one", n)
	}
}
