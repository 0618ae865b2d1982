package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The admin token is taken only as Authorization: Bearer (a token in a
// URL stays in histories and logs), and a metrics_token guards /metrics.
func TestAdminAndMetricsTokens(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, nil, "admin_token: adm-secret\nmetrics_token: met-secret\n"+twoTargets, p, newUpstream(t, chatOK("s")))
	do := func(method, path, bearer string) int {
		req, _ := http.NewRequest(method, gw.URL+path, strings.NewReader(`{"target":"primary/gpt-4.1","state":"open"}`))
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, bearer string
		want                 int
	}{
		{"POST", "/fusebox/breaker?target=primary/gpt-4.1&action=reset&token=adm-secret", "", 401},
		{"POST", "/fusebox/reload?token=adm-secret", "", 401},
		{"GET", "/fusebox/status?token=adm-secret", "", 401},
		{"GET", "/fusebox/status", "adm-secret", 200},
		{"POST", "/fusebox/breaker?target=primary/gpt-4.1&action=reset", "adm-secret", 200},
		{"GET", "/dashboard", "", 200}, // the page holds no data; it asks for the token
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "adm-secret", 401},
		{"GET", "/metrics", "met-secret", 200},
	} {
		if got := do(c.method, c.path, c.bearer); got != c.want {
			t.Errorf("%s %s (bearer %q): %d; want %d", c.method, c.path, c.bearer, got, c.want)
		}
	}
}
