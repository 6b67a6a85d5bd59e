package testkit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// childProcAttr has the kernel stop a child process (a test's nats-server) with SIGTERM should
// the test process die without stopping it, so that no server outlives a killed `go test`.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// clockTicks is USER_HZ, the unit of the times in /proc (100 on every Linux architecture Go
// supports).
const clockTicks = 100

// MachineCPU returns the CPU time every core of the machine has spent busy (user, nice, system,
// interrupts, steal) since boot, in seconds, from /proc/stat; a benchmark takes the difference
// over a phase to report how much of the machine the phase used, whichever process used it.
// ok is false where /proc/stat cannot be read.
func MachineCPU() (seconds float64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	// user nice system idle iowait irq softirq steal: all but idle and iowait.
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		busy += v
	}
	return float64(busy) / clockTicks, true
}

// ProcessCPU returns the CPU time (user and system) process pid has used, in seconds, from
// /proc/<pid>/stat; ok is false where it cannot be read.
func ProcessCPU(pid int) (seconds float64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces: the fields after it start past the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// After the name: state(3) ... utime(14) stime(15), so indexes 11 and 12 here.
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return float64(u+st) / clockTicks, true
}
