package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/fuseboxhq/fusebox/bench/internal/buildtree"
	"github.com/fuseboxhq/fusebox/bench/internal/proc"
)

// buildFusebox compiles cmd/fusebox from the repository at root into dir.
func buildFusebox(root, dir string) (string, error) {
	bin := filepath.Join(dir, "fusebox")
	return bin, buildtree.Fusebox(context.Background(), root, bin, buildtree.Options{})
}

// fuseboxConfig is the gateway's configuration for the run: one provider,
// the fast upstream, behind the alias "fast"; everything else default.
func fuseboxConfig(port int, upstreamURL string) string {
	return "listen: 127.0.0.1:" + strconv.Itoa(port) + "\n" + fuseboxExtra +
		"providers:\n" +
		"  up: {type: openai, base_url: \"" + upstreamURL + "\", keys: [k]}\n" +
		"models:\n" +
		"  - name: fast\n" +
		"    targets: [{provider: up, model: m, price: {input: 1, output: 1}}]\n"
}

// fuseboxExtra is added to the gateway's configuration: the -state and
// -budget flags' settings.
var fuseboxExtra string

// setFuseboxExtra sets fuseboxExtra from the flags: state, a Redis URL
// ("" or memory: none), and budget, a client (the load's key, k) with a
// budget that never runs out, so that every request reserves and settles.
func setFuseboxExtra(state string, budget bool) {
	fuseboxExtra = ""
	if state != "" && state != "memory" {
		fuseboxExtra += "state: " + state + "\n"
	}
	if budget {
		fuseboxExtra += "clients:\n  - {name: load, key: k, budget: {daily: 1000000000}}\n"
	}
}

// startFusebox writes the config into dir and starts bin serving it.
func startFusebox(bin, dir, upstreamURL string) (*proc.Process, int, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	cfg := filepath.Join(dir, "fusebox.yaml")
	if err := os.WriteFile(cfg, []byte(fuseboxConfig(port, upstreamURL)), 0o600); err != nil {
		return nil, 0, err
	}
	p, err := proc.Start(proc.Command{Path: bin, Args: []string{"serve", "--config", cfg}, Dir: dir, Log: filepath.Join(dir, "fusebox.log")})
	return p, port, err
}

// The Portkey gateway, as the issue pins it.
const (
	portkeyPackage = "@portkey-ai/gateway"
	portkeyVersion = "1.15.2"
	// honoVersion is pinned with npm overrides: newer @hono/node-server
	// releases break the gateway's streaming.
	honoVersion = "1.13.5"
	portkeyMain = "node_modules/@portkey-ai/gateway/build/start-server.js"
)

// portkeyManifest is the package.json written into the install folder.
var portkeyManifest = `{
  "name": "fusebox-bench-portkey",
  "private": true,
  "description": "The Portkey gateway for bench/gatewayload; installed by go run ./gatewayload -install-portkey.",
  "dependencies": {"` + portkeyPackage + `": "` + portkeyVersion + `"},
  "overrides": {"@hono/node-server": "` + honoVersion + `"}
}
`

// installPortkey runs npm install in dir, showing npm's output.
func installPortkey(dir string) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("npm is not on PATH: install Node.js (20 or later) to measure Portkey")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(portkeyManifest), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install in %s: %v", dir, err)
	}
	return nil
}

// portkeyMissing says why Portkey cannot run from dir, or "" if it can.
func portkeyMissing(dir string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "Node.js (node) is not on PATH"
	}
	if _, err := os.Stat(filepath.Join(dir, portkeyMain)); err != nil {
		return portkeyPackage + " is not installed in " + dir + " (run with -install-portkey)"
	}
	for pkg, want := range map[string]string{portkeyPackage: portkeyVersion, "@hono/node-server": honoVersion} {
		if got := installedVersion(dir, pkg); got != want {
			return fmt.Sprintf("%s in %s is version %q, want %s (run with -install-portkey)", pkg, dir, got, want)
		}
	}
	return ""
}

// installedVersion reads the version of an installed npm package.
func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &m)
	return m.Version
}

// startPortkey starts the Portkey gateway from dir, headless, its log in
// logDir.
func startPortkey(dir, logDir string) (*proc.Process, int, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	p, err := proc.Start(proc.Command{Path: "node", Args: []string{portkeyMain, "--port=" + strconv.Itoa(port), "--headless"},
		Dir: dir, Log: filepath.Join(logDir, "portkey.log")})
	return p, port, err
}

// nodeVersion returns `node --version`, or "".
func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}
