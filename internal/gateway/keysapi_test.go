package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

const testAdmin = "adm-7f3a9c21e4b86d05f1a2"

// adminDo sends an admin request with token (none if "") and returns its
// status and decoded JSON body.
func adminDo(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	code, raw := adminRaw(t, method, url, token, body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return code, out
}

// adminRaw sends an admin request and returns its status and body.
func adminRaw(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// mint mints a key through the admin API and returns its id and token.
func mint(t *testing.T, base, body string) (string, string) {
	t.Helper()
	code, out := adminDo(t, "POST", base+"/fusebox/keys", testAdmin, body)
	if code != http.StatusCreated {
		t.Fatalf("mint %s: %d %v", body, code, out)
	}
	return out["id"].(string), out["key"].(string)
}

func keysConfig(file string) string {
	return "admin_token: " + testAdmin + "\nkeys: {file: " + file + "}\n" + twoTargets
}

// The life of a minted key: the gateway is open until the first is
// minted and never again after; the key works until rotated, its limits
// apply, it is never shown again, and it is refused once revoked; it
// survives a restart.
func TestMintedKeyLifecycle(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, keysConfig(file), p, s)
	if c, _ := chat(t, gw.URL); c != 200 {
		t.Fatalf("an open gateway answered %d", c)
	}
	id, token := mint(t, gw.URL, `{"name":"web","models":["smart"],"budget":{"daily":5}}`)
	if c, _ := chat(t, gw.URL); c != 401 {
		t.Fatalf("without a key after minting: %d, want 401", c)
	}
	if c, body := chat(t, gw.URL, token); c != 200 {
		t.Fatalf("with the minted key: %d %s", c, body)
	}
	code, list := adminDo(t, "GET", gw.URL+"/fusebox/keys", testAdmin, "")
	raw, _ := json.Marshal(list)
	if code != 200 || strings.Contains(string(raw), token) || strings.Contains(string(raw), "hash") || !strings.Contains(string(raw), id) {
		t.Fatalf("list: %d %s", code, raw)
	}
	if code, one := adminDo(t, "GET", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); code != 200 || one["key"] != nil || one["name"] != "web" {
		t.Fatalf("get: %d %v", code, one)
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), token) {
		t.Fatal("the key file holds the token")
	}

	// A restart keeps the key.
	_, gw2 := gateway(t, nil, keysConfig(file), p, s)
	if c, _ := chat(t, gw2.URL, token); c != 200 {
		t.Fatalf("after a restart: %d", c)
	}

	code, rot := adminDo(t, "PATCH", gw.URL+"/fusebox/keys/"+id, testAdmin, `{"rotate":true,"limits":{"rpm":1}}`)
	token2, _ := rot["key"].(string)
	if code != 200 || token2 == "" || token2 == token {
		t.Fatalf("rotate: %d %v", code, rot)
	}
	if c, _ := chat(t, gw.URL, token); c != 401 {
		t.Fatalf("the rotated-out key: %d, want 401", c)
	}
	if c, _ := chat(t, gw.URL, token2); c != 200 {
		t.Fatalf("the new key: %d", c)
	}
	if c, _ := chat(t, gw.URL, token2); c != 429 {
		t.Fatalf("past its rpm of 1: %d, want 429", c)
	}
	if code, _ := adminDo(t, "DELETE", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	if c, _ := chat(t, gw.URL, token2); c != 401 {
		t.Fatalf("the revoked key: %d, want 401", c)
	}
	if c, _ := chat(t, gw.URL); c != 401 {
		t.Fatalf("with its last minted key revoked the gateway opened: %d", c)
	}
	if code, _ := adminDo(t, "DELETE", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); code != 404 {
		t.Fatalf("second revoke: %d, want 404", code)
	}
}

// The admin API as a hostile caller meets it: wrong or missing token,
// ambiguous bodies, huge bodies, names taken by the configuration.
func TestKeysAPIHostile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	cfg := "clients:\n  - {name: ops, key: ops-key-0a9f3be17c}\n" + keysConfig(file)
	_, gw := gateway(t, nil, cfg, p, s)
	url := gw.URL + "/fusebox/keys"
	for _, tok := range []string{"", "wrong", testAdmin + "x", "ops-key-0a9f3be17c"} {
		if code, _ := adminDo(t, "POST", url, tok, `{"name":"x"}`); code != 401 {
			t.Errorf("token %q: %d, want 401", tok, code)
		}
		if code, _ := adminDo(t, "GET", url, tok, ""); code != 401 {
			t.Errorf("list with token %q: %d, want 401", tok, code)
		}
	}
	for _, c := range []struct {
		body  string
		code  int
		param string
	}{
		{`{"name":"a","name":"b"}`, 400, "name"},
		{`{"name":"a","n\u0061me":"b"}`, 400, "name"},
		{`{"name":"a","Models":["smart"]}`, 400, "Models"},
		{`{"name":"a","key":"fbx_chosen-by-me"}`, 400, "key"},
		{`{"name":"a","models":["nope"]}`, 400, "models[0]"},
		{`{"name":"ops"}`, 409, "name"},
		{`{"name":"a","weight":1e400}`, 400, "weight"},
		{`{"name":"a","weight":1.5}`, 400, "weight"},
		{`{"name":"` + strings.Repeat("a", 100<<10) + `"}`, 413, ""},
		{`{"name":"a","models":[` + strings.Repeat(`"smart",`, 20000) + `"smart"]}`, 413, ""},
	} {
		code, out := adminDo(t, "POST", url, testAdmin, c.body)
		errObj, _ := out["error"].(map[string]any)
		param, _ := errObj["param"].(string)
		if code != c.code || errObj == nil || param != c.param {
			short := c.body
			if len(short) > 60 {
				short = short[:60]
			}
			t.Errorf("%s: %d %v, want %d with param %q", short, code, out, c.code, c.param)
		}
	}
	if _, out := adminDo(t, "GET", url, testAdmin, ""); len(out["data"].([]any)) != 0 {
		t.Fatalf("a refused body minted a key: %v", out)
	}
	id, _ := mint(t, gw.URL, `{"name":"a"}`)
	if code, _ := adminDo(t, "POST", url, testAdmin, `{"name":"a"}`); code != 409 {
		t.Errorf("a second key named a: %d, want 409", code)
	}
	if code, out := adminDo(t, "PATCH", url+"/"+id, testAdmin, `{"name":"b"}`); code != 400 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "does not change") {
		t.Errorf("rename: %d %v", code, out)
	}
	if code, _ := adminDo(t, "PATCH", url+"/key_nope", testAdmin, `{"rotate":true}`); code != 404 {
		t.Errorf("patch of an unknown key: %d", code)
	}
	// Without somewhere to keep keys, minting says so.
	_, bare := gateway(t, nil, "admin_token: "+testAdmin+"\n"+twoTargets, p, s)
	if code, out := adminDo(t, "POST", bare.URL+"/fusebox/keys", testAdmin, `{"name":"a"}`); code != 409 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "keys.file") {
		t.Errorf("minting with no keys.file: %d %v", code, out)
	}
}

// The configuration's client wins over a minted key of its name: after a
// reload adds "batch" to clients:, the minted "batch" key is refused and
// shown as shadowed.
func TestConfiguredClientWinsOverMintedKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	cfg := keysConfig(file)
	var mu sync.Mutex
	o := Options{Load: func() (*config.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return parse(withUpstreams(cfg, p, s))
	}}
	srv, gw := start(t, o, cfg, p, s)
	id, token := mint(t, gw.URL, `{"name":"batch"}`)
	if c, _ := chat(t, gw.URL, token); c != 200 {
		t.Fatalf("minted key: %d", c)
	}
	mu.Lock()
	cfg = "clients:\n  - {name: batch, key: conf-key-51c0e2a9d7}\n" + keysConfig(file)
	mu.Unlock()
	if _, err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if c, _ := chat(t, gw.URL, token); c != 401 {
		t.Fatalf("the shadowed minted key: %d, want 401", c)
	}
	if c, _ := chat(t, gw.URL, "conf-key-51c0e2a9d7"); c != 200 {
		t.Fatalf("the configured key: %d", c)
	}
	if _, one := adminDo(t, "GET", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); one["shadowed"] != true {
		t.Fatalf("the minted key is not shown as shadowed: %v", one)
	}
}

// A request let in with a key finishes when the key is revoked while it
// runs; the next request with the key is refused.
func TestRevokedKeyInFlightFinishes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		arrived <- struct{}{}
		<-release
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, keysConfig(file), p, s)
	id, token := mint(t, gw.URL, `{"name":"web"}`)
	done := make(chan int)
	go func() {
		c, _ := chat(t, gw.URL, token)
		done <- c
	}()
	<-arrived
	if code, _ := adminDo(t, "DELETE", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	close(release)
	if c := <-done; c != 200 {
		t.Fatalf("the request in flight at the revocation: %d, want 200", c)
	}
	if c, _ := chat(t, gw.URL, token); c != 401 {
		t.Fatalf("after the revocation: %d", c)
	}
}

// Minting, revoking and using keys at once through the API: a key whose
// revocation was answered is refused, a key not revoked works, and the
// list is exactly the keys not revoked.
func TestMintRevokeHammerThroughTheAPI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, keysConfig(file), p, s)
	var wg sync.WaitGroup
	var mu sync.Mutex
	live := map[string]string{}
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				id, token := mint(t, gw.URL, `{"name":"c`+strconv.Itoa(g)+`-`+strconv.Itoa(i)+`"}`)
				if c, _ := chat(t, gw.URL, token); c != 200 {
					t.Errorf("a fresh key: %d", c)
				}
				if i%2 == 1 {
					mu.Lock()
					live[id] = token
					mu.Unlock()
					continue
				}
				if code, _ := adminDo(t, "DELETE", gw.URL+"/fusebox/keys/"+id, testAdmin, ""); code != 200 {
					t.Errorf("revoke: %d", code)
				}
				if c, _ := chat(t, gw.URL, token); c != 401 {
					t.Errorf("a revoked key: %d", c)
				}
			}
		}()
	}
	wg.Wait()
	_, out := adminDo(t, "GET", gw.URL+"/fusebox/keys", testAdmin, "")
	data := out["data"].([]any)
	if len(data) != len(live) {
		t.Fatalf("%d keys listed, want %d", len(data), len(live))
	}
	for _, d := range data {
		if live[d.(map[string]any)["id"].(string)] == "" {
			t.Fatalf("listed a key not minted or revoked: %v", d)
		}
	}
}

// Three replicas on one Redis: a key minted through one replica's API
// works on the others, and a key revoked through one is refused by all.
// What is awaited is the change's message (bounded); that the poll alone
// brings it within 1 s is internal/keys' TestRedisStorePollCatchesLostMessages.
func TestReplicasShareMintedKeys(t *testing.T) {
	state := "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms}\n"
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	cfg := state + "admin_token: " + testAdmin + "\n" + twoTargets
	var urls []string
	for range 3 {
		_, gw := gateway(t, nil, cfg, p, s)
		urls = append(urls, gw.URL)
	}
	id, token := mint(t, urls[0], `{"name":"web","limits":{"rpm":600}}`)
	for i := 1; i < 3; i++ {
		eventually(t, "the key on replica "+strconv.Itoa(i), func() bool { c, _ := chat(t, urls[i], token); return c == 200 })
	}
	if code, _ := adminDo(t, "POST", urls[2]+"/fusebox/keys", testAdmin, `{"name":"web"}`); code != 409 {
		t.Fatalf("the same name on another replica: %d, want 409", code)
	}
	if code, _ := adminDo(t, "DELETE", urls[1]+"/fusebox/keys/"+id, testAdmin, ""); code != 200 {
		t.Fatalf("revoke on replica 1: %d", code)
	}
	for i := range 3 {
		eventually(t, "the revocation on replica "+strconv.Itoa(i), func() bool { c, _ := chat(t, urls[i], token); return c == 401 })
		if c, _ := chat(t, urls[i]); c != 401 {
			t.Fatalf("replica %d opened when the fleet's last key was revoked: %d", i, c)
		}
	}
}
