package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
)

const keysAdmin = "adm-3c9e1f07b2d84a65"

func keysGateway(t *testing.T) string {
	t.Helper()
	src := "admin_token: " + keysAdmin + "\nkeys: {file: " + filepath.Join(t.TempDir(), "keys.json") + "}\n" +
		"providers:\n  openai: {type: openai, base_url: \"http://127.0.0.1:1/v1\", keys: [k]}\n" +
		"models: [{name: smart, targets: [{provider: openai, model: m}]}]\n"
	cfg, err := config.Parse("f.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(hs.Close)
	return hs.URL
}

func keysRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), append([]string{"keys"}, args...), &out, &out)
	return out.String(), err
}

// fusebox keys mints, lists, changes, rotates, shows and revokes through
// a running gateway's admin API; the key is printed once.
func TestKeysCommand(t *testing.T) {
	url := keysGateway(t)
	t.Setenv("FUSEBOX_ADMIN_TOKEN", "")
	if _, err := keysRun(t, "list", "--url", url); err == nil || !strings.Contains(err.Error(), "FUSEBOX_ADMIN_TOKEN") {
		t.Fatalf("without a token: %v", err)
	}
	t.Setenv("FUSEBOX_ADMIN_TOKEN", keysAdmin)
	out, err := keysRun(t, "mint", "web", "--url", url, "--models", "smart", "--rpm", "60", "--daily", "5")
	if err != nil {
		t.Fatalf("mint: %v %s", err, out)
	}
	key := regexp.MustCompile(`key: (fbx_\S+)`).FindStringSubmatch(out)
	id := regexp.MustCompile(`key_[0-9a-f]{16}`).FindString(out)
	if key == nil || id == "" || !strings.Contains(out, "only time") {
		t.Fatalf("mint printed %q", out)
	}
	out, err = keysRun(t, "set", id, "--url", url, "--tpm", "1000", "--monthly", "30")
	if err != nil || !strings.Contains(out, "60") || !strings.Contains(out, "1000") || !strings.Contains(out, "30") {
		t.Fatalf("set: %v %q", err, out)
	}
	out, err = keysRun(t, "list", "--url", url)
	if err != nil || !strings.Contains(out, "web") || strings.Contains(out, key[1]) {
		t.Fatalf("list: %v %q", err, out)
	}
	out, err = keysRun(t, "rotate", id, "--url", url)
	if err != nil || !strings.Contains(out, "key: fbx_") || strings.Contains(out, key[1]) {
		t.Fatalf("rotate: %v %q", err, out)
	}
	if out, err = keysRun(t, "show", id, "--url", url, "--json"); err != nil || !strings.Contains(out, `"name":"web"`) || strings.Contains(out, `"key"`) {
		t.Fatalf("show: %v %q", err, out)
	}
	if out, err = keysRun(t, "revoke", id, "--url", url); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %v %q", err, out)
	}
	if _, err = keysRun(t, "show", id, "--url", url); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("show after revoke: %v", err)
	}
	if _, err = keysRun(t, "mint", "x", "--url", url, "--models", "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("mint with an unknown model: %v", err)
	}
}
