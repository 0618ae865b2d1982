package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// CPUTime returns the user plus system CPU time a process has used so
// far, all its threads included (those that have exited too).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// fields are counted after its closing one.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so utime (14) and stime (15) are f[11], f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime or stime", pid)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// Status is what a benchmark reads of /proc/PID/status.
type Status struct {
	RSS     int64 // VmRSS, bytes
	HWM     int64 // VmHWM, the peak RSS, bytes
	Threads int
}

// ReadStatus reads a process's /proc/PID/status.
func ReadStatus(pid int) (Status, error) {
	var s Status
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM" && k != "Threads") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return s, fmt.Errorf("/proc/%d/status: %s: %v", pid, k, err)
		}
		switch k {
		case "VmRSS":
			s.RSS = n << 10
		case "VmHWM":
			s.HWM = n << 10
		default:
			s.Threads = int(n)
		}
	}
	return s, nil
}

// Memory returns a process's resident set size now and its peak (VmRSS
// and VmHWM), in bytes.
func Memory(pid int) (rss, hwm int64, err error) {
	s, err := ReadStatus(pid)
	return s.RSS, s.HWM, err
}

// ResetPeak sets a process's VmHWM back to its current RSS (Linux 4.0 and
// later), so that VmHWM read later is the peak since. It reports whether
// the kernel allowed it.
func ResetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// Sampler records the highest VmRSS seen while it runs, as a check on
// VmHWM and as the figure to use where VmHWM cannot be reset.
type Sampler struct {
	pid  int
	stop chan struct{}
	done sync.WaitGroup
	max  int64 // written by the sampling goroutine; read after done.Wait
}

// SampleRSS starts reading pid's VmRSS every so often.
func SampleRSS(pid int, every time.Duration) *Sampler {
	s := &Sampler{pid: pid, stop: make(chan struct{})}
	s.done.Add(1)
	go s.sample(every)
	return s
}

func (s *Sampler) sample(every time.Duration) {
	defer s.done.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if rss, _, err := Memory(s.pid); err == nil && rss > s.max {
			s.max = rss
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Finish stops sampling and returns the highest RSS seen.
func (s *Sampler) Finish() int64 {
	close(s.stop)
	s.done.Wait()
	return s.max
}

// LoadAverage returns the first three fields of /proc/loadavg.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// RaiseNoFile raises this process's limit on open files (RLIMIT_NOFILE)
// to want, the hard limit too if it may (as root), else as far as the hard
// limit goes, and returns the limit now in force. Children started after
// it inherit the limit: setting it here also stops the Go runtime from
// giving them back the soft limit this process started with.
func RaiseNoFile(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			return want, nil
		}
	}
	lim.Cur = max(lim.Cur, min(want, lim.Max))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}

// PortRange returns the kernel's ephemeral port range
// (net.ipv4.ip_local_port_range), the ports outgoing connections get.
func PortRange() (lo, hi int, err error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("ip_local_port_range: %q", b)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("ip_local_port_range: %q", b)
	}
	return lo, hi, nil
}
