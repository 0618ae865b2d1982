package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// No secret of the configuration — provider keys, client keys, the admin
// token, secret header values — appears in the logs, the metrics, the
// error answers, the response headers or the admin API, whatever happens:
// answers, a refused provider key, a refused client key, every target
// down, admin actions, a reload.
func TestSecretsNeverLeave(t *testing.T) {
	secrets := []string{"sk-prov-alpha-7f3a", "sk-prov-beta-91c2", "ck-client-4d5e", "adm-token-8b1f", "hdr-secret-2c9d"}
	p := newUpstream(t, chatOK("primary"))
	s := newUpstream(t, status(401, "invalid_api_key"))
	var logs strings.Builder
	var logMu sync.Mutex
	yaml := `admin_token: adm-token-8b1f
clients:
  - {name: web, key: ck-client-4d5e}
providers:
  primary: {type: openai, base_url: "%s", keys: [sk-prov-alpha-7f3a], headers: {X-Org: hdr-secret-2c9d}}
  secondary: {type: openai, base_url: "%s", keys: [sk-prov-beta-91c2]}
models:
  - name: smart
    targets: [{provider: primary, model: a}, {provider: secondary, model: b}]
    retry: {attempts: 1}
  - name: second
    targets: [{provider: secondary, model: b}]
`
	_, gw, _ := reloadableWithLog(t, slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &logMu}, nil)), yaml, p, s)

	var seen strings.Builder
	record := func(resp *http.Response) {
		for k, v := range resp.Header {
			seen.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen.Write(b)
		seen.WriteByte('\n')
	}
	do := func(method, path, auth, body string) {
		req, _ := http.NewRequest(method, gw.URL+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		record(resp)
	}
	chat := `{"model":"%s","messages":[{"role":"user","content":"hi"}]}`
	do("POST", "/v1/chat/completions", "ck-client-4d5e", strings.Replace(chat, "%s", "smart", 1))  // answered
	do("POST", "/v1/chat/completions", "ck-client-4d5e", strings.Replace(chat, "%s", "second", 1)) // the provider refuses its key
	do("POST", "/v1/chat/completions", "ck-client-4d5e", strings.Replace(chat, "%s", "second", 1)) // no target left: 503
	do("POST", "/v1/chat/completions", "ck-client-4d5e-wrong", strings.Replace(chat, "%s", "smart", 1))
	do("POST", "/v1/chat/completions", "ck-client-4d5e", `{"model":`)
	do("GET", "/v1/models", "ck-client-4d5e", "")
	do("GET", "/fusebox/status", "adm-token-8b1f", "")
	do("POST", "/fusebox/breaker?target=primary/a&action=force-open", "adm-token-8b1f", "")
	do("POST", "/fusebox/key?id=primary%230&action=disable", "adm-token-8b1f", "")
	do("POST", "/fusebox/reload", "adm-token-8b1f", "")
	do("GET", "/fusebox/status", "wrong-token", "")
	do("GET", "/metrics", "", "")
	do("GET", "/readyz", "", "")

	// The failures above happened.
	if !strings.Contains(seen.String(), "invalid_api_key") || !strings.Contains(seen.String(), `"keys"`) {
		t.Fatalf("the scenario did not run as planned:\n%s", seen.String())
	}
	eventually(t, "the refused key in the log", func() bool {
		return strings.Contains(logsString(&logs, &logMu), "API key taken out of rotation")
	})
	out := seen.String() + logsString(&logs, &logMu)
	for _, secret := range secrets {
		if strings.Contains(out, secret) {
			i := strings.Index(out, secret)
			t.Errorf("%q leaked: …%s…", secret, out[max(i-200, 0):min(i+50, len(out))])
		}
	}
	if p.calls() != 1 || !strings.Contains(p.header(0).Get("X-Org"), "hdr-secret-2c9d") {
		t.Fatalf("the secret header did not reach the upstream")
	}
}
