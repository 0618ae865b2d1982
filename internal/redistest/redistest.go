// Package redistest starts a real redis-server for tests, on a free
// loopback port, with nothing saved to disk: one node (Start) or a Cluster
// of three masters (StartCluster).
//
// A test that needs Redis calls Start; without redis-server on the PATH it
// is skipped, unless FUSEBOX_REQUIRE_REDIS=1 is set (as CI sets it), which
// makes the missing server a failure.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server process started for a test.
type Server struct {
	t    testing.TB
	Addr string // host:port on 127.0.0.1
	port int
	cmd  *exec.Cmd
	dir  string
	// extra are more redis-server arguments (cluster mode).
	extra []string
}

// Start starts redis-server on a free loopback port; it is stopped when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("FUSEBOX_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server is not installed and FUSEBOX_REQUIRE_REDIS=1 (Debian: apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server)")
	}
	s := &Server{t: t, port: freePort(t), dir: t.TempDir()}
	s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
	s.start(bin)
	t.Cleanup(s.Stop)
	return s
}

// URL returns the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

func (s *Server) start(bin string) {
	s.t.Helper()
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "no"}, s.extra...)
	s.cmd = exec.Command(bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !s.ping() {
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer PING within 10s", s.Addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ping reports whether the server answers PING.
func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Stop kills the server (its data is gone). Calling it again does
// nothing.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot die
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same port after Stop, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	s.start(bin)
}

// Pause stops the server's process (SIGSTOP): connections stay open and
// nothing answers, as with a server that hangs.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT); a stopped one it leaves.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

// signal sends sig to the server's process, if it runs.
func (s *Server) signal(sig os.Signal) {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(sig)
	}
}

// freePort returns a loopback TCP port nobody listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Cluster is a Redis Cluster of three masters started for a test.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts three redis-server nodes in cluster mode on free
// loopback ports and joins them into a cluster (redis-cli --cluster
// create), skipped or failed as Start is without redis-server.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	cli, cerr := exec.LookPath("redis-cli")
	if err != nil || cerr != nil {
		if os.Getenv("FUSEBOX_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server and redis-cli are not installed and FUSEBOX_REQUIRE_REDIS=1 (Debian: apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server)")
	}
	c := &Cluster{}
	args := []string{"--cluster", "create"}
	for range 3 {
		s := &Server{t: t, port: freePort(t), dir: t.TempDir()}
		s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
		s.extra = []string{"--cluster-enabled", "yes", "--cluster-config-file", s.dir + "/nodes.conf"}
		s.start(bin)
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !c.ready() {
		if time.Now().After(deadline) {
			t.Fatal("the Redis Cluster did not report cluster_state:ok within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}

// Addrs returns the nodes' host:port.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, s := range c.Nodes {
		a = append(a, s.Addr)
	}
	return a
}

// ready reports whether every node says cluster_state:ok.
func (c *Cluster) ready() bool {
	for _, s := range c.Nodes {
		conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		conn.SetDeadline(time.Now().Add(time.Second))
		fmt.Fprint(conn, "CLUSTER INFO\r\n")
		buf := make([]byte, 4096)
		n, _ := conn.Read(buf)
		conn.Close()
		if !strings.Contains(string(buf[:n]), "cluster_state:ok") {
			return false
		}
	}
	return true
}

// Sentinel is a master watched by one Sentinel, started for a test.
type Sentinel struct {
	Master   *Server
	Sentinel *Server
	Name     string // the master's name, as the Sentinel knows it
}

// StartSentinel starts a redis-server master and a redis-server in
// sentinel mode watching it as "fusebox", skipped or failed as Start is
// without redis-server.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	m := Start(t)
	bin, _ := exec.LookPath("redis-server")
	s := &Server{t: t, port: freePort(t), dir: t.TempDir()}
	s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
	conf := s.dir + "/sentinel.conf"
	cfg := "port " + strconv.Itoa(s.port) + "\nbind 127.0.0.1\nprotected-mode no\ndir " + s.dir + "\n" +
		"sentinel monitor fusebox 127.0.0.1 " + strconv.Itoa(m.port) + " 1\n"
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, conf, "--sentinel")
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("redis-server --sentinel: %v", err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for !s.ping() {
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinel on %s did not answer PING within 10s", s.Addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &Sentinel{Master: m, Sentinel: s, Name: "fusebox"}
}
