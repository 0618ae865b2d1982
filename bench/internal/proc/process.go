// Package proc runs the programs a benchmark measures as child processes
// and reads what Linux's /proc says about them: CPU time, resident memory
// and threads. A gateway measured in a process of its own has figures of
// its own, apart from the load generator's.
package proc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command says how to start a child process.
type Command struct {
	Path string   // the program
	Args []string // its arguments, without the program's name
	Env  []string // added to this process's environment; nil: the same
	Dir  string   // its working directory; "": this process's
	Log  string   // the file its stdout and stderr go to
}

// Process is a running child. Its methods are safe for concurrent use.
type Process struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // from Wait; read after exited is closed
}

// Start starts c. The child gets SIGTERM if this program dies first.
func Start(c Command) (*Process, error) {
	logf, err := os.Create(c.Log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = c.Dir, logf, logf
	if c.Env != nil {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &Process{cmd: cmd, log: c.Log, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// PID is the child's process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is the file its output goes to.
func (p *Process) LogPath() string { return p.log }

// Exited is closed when the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop asks the child to end (SIGTERM), and kills it after 5 s.
func (p *Process) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// WaitReady calls check until it succeeds, the child exits, ctx ends or
// 60 s pass.
func (p *Process) WaitReady(ctx context.Context, check func(context.Context) error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 60 s: %v; log: %s\n%s", err, p.log, p.LogTail())
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited (%v) before it was ready; log: %s\n%s", p.err, p.log, p.LogTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// LogTail returns the last 2000 bytes of the child's output.
func (p *Process) LogTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
