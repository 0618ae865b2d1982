package proc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadSelf(t *testing.T) {
	pid := os.Getpid()
	st, err := ReadStatus(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS <= 0 || st.HWM < st.RSS || st.Threads < 1 {
		t.Errorf("ReadStatus = %+v", st)
	}
	if _, err := CPUTime(pid); err != nil {
		t.Error(err)
	}
	if lo, hi, err := PortRange(); err != nil || lo <= 0 || hi < lo {
		t.Errorf("PortRange = %d, %d, %v", lo, hi, err)
	}
}

func TestStartStop(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(Command{Path: "sh", Args: []string{"-c", "echo ready; exec sleep 60"}, Log: filepath.Join(dir, "log")})
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), func(context.Context) error {
		if p.LogTail() != "ready" {
			return os.ErrNotExist
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if time.Since(start) > 4*time.Second {
		t.Error("SIGTERM did not end the process")
	}
}
