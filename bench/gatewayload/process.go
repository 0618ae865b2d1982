package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is a gateway running as a child process, with its output in a
// log file.
type process struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // from Wait; read after exited is closed
}

// startProcess runs name with args in dir, its stdout and stderr going to
// logPath. The child gets SIGTERM if this program dies first.
func startProcess(dir, logPath, name string, args ...string) (*process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop asks the process to end (SIGTERM), and kills it after 5 s.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// waitReady calls check until it succeeds, the process exits, ctx ends or
// 60 s pass.
func (p *process) waitReady(ctx context.Context, check func(context.Context) error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 60 s: %v; log: %s\n%s", err, p.logPath, p.logTail())
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited (%v) before it was ready; log: %s\n%s", p.err, p.logPath, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// logTail returns the end of the process's log.
func (p *process) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// buildFusebox compiles cmd/fusebox from the repository at root into dir.
func buildFusebox(root, dir string) (string, error) {
	bin := filepath.Join(dir, "fusebox")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fusebox")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/fusebox: %v\n%s", err, out)
	}
	return bin, nil
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
func startFusebox(bin, dir, upstreamURL string) (*process, int, error) {
	port, err := freePort()
	if err != nil {
		return nil, 0, err
	}
	cfg := filepath.Join(dir, "fusebox.yaml")
	if err := os.WriteFile(cfg, []byte(fuseboxConfig(port, upstreamURL)), 0o600); err != nil {
		return nil, 0, err
	}
	p, err := startProcess(dir, filepath.Join(dir, "fusebox.log"), bin, "serve", "--config", cfg)
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
func startPortkey(dir, logDir string) (*process, int, error) {
	port, err := freePort()
	if err != nil {
		return nil, 0, err
	}
	p, err := startProcess(dir, filepath.Join(logDir, "portkey.log"), "node", portkeyMain,
		"--port="+strconv.Itoa(port), "--headless")
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
