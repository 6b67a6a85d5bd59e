package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on
// every Linux this runs on).
const clockTicks = 100

// cpuSample is the CPU time consumed so far by each process of a stack, by name: the service
// binaries and the nats-server started from binDir, the PostgreSQL backends serving the stack's
// database, and this test process.
type cpuSample struct {
	at  time.Time
	cpu map[string]map[int]time.Duration // name → pid → CPU time
}

// sampleCPU reads the CPU time of the stack's processes (Linux /proc; empty elsewhere).
func sampleCPU(ctx context.Context, db *pgxpool.Pool) cpuSample {
	s := cpuSample{at: time.Now(), cpu: map[string]map[int]time.Duration{}}
	add := func(name string, pid int) {
		if d, ok := procCPU(pid); ok {
			if s.cpu[name] == nil {
				s.cpu[name] = map[int]time.Duration{}
			}
			s.cpu[name][pid] = d
		}
	}
	const self = "e2e test process (load generator, pollers)"
	names := map[int]string{os.Getpid(): self}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, binDir+string(filepath.Separator)) {
			names[pid] = filepath.Base(exe)
		}
	}
	for pid, name := range names {
		add(name, pid)
	}
	clients := socketOwners(names)
	rows, err := db.Query(ctx, `SELECT pid, coalesce(client_port, 0) FROM pg_stat_activity WHERE datname = current_database()`)
	if err == nil {
		for rows.Next() {
			var pid, port int
			if rows.Scan(&pid, &port) == nil {
				owner := clients[port]
				if owner == "" {
					owner = "?"
				}
				add("postgres backends of "+owner, pid)
			}
		}
		rows.Close()
	}
	return s
}

// socketOwners maps the local port of each TCP socket held by one of the processes (pid →
// name) to that name, from /proc/net/tcp{,6} and the processes' file descriptors: which
// process a PostgreSQL backend's client port belongs to.
func socketOwners(names map[int]string) map[int]string {
	byInode := map[string]string{}
	for pid, name := range names {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				byInode[strings.TrimSuffix(inode, "]")] = name
			}
		}
	}
	out := map[int]string{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(file)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			_, portHex, ok := strings.Cut(f[1], ":")
			port, err := strconv.ParseInt(portHex, 16, 32)
			if name := byInode[f[9]]; ok && err == nil && name != "" {
				out[int(port)] = name
			}
		}
	}
	return out
}

// procCPU is the user plus system CPU time of the process.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields after it start past its ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// cpuSpent is the CPU each process name spent between two samples, and their total (a process
// absent from the first sample counts from 0).
func cpuSpent(from, to cpuSample) (map[string]time.Duration, time.Duration) {
	byName := map[string]time.Duration{}
	var total time.Duration
	for name, pids := range to.cpu {
		for pid, c := range pids {
			byName[name] += c - from.cpu[name][pid]
		}
		total += byName[name]
	}
	return byName, total
}

// cpuPerLifecycle is the CPU milliseconds all the sampled processes spent between two samples
// per lifecycle of the n done meanwhile.
func cpuPerLifecycle(from, to cpuSample, n int) float64 {
	_, total := cpuSpent(from, to)
	return float64(total.Microseconds()) / 1000 / float64(max(n, 1))
}

// cpuBreakdown describes, on one line (benchmark logs keep 10 lines), where CPU went between
// two samples: per process name, cores used on average and CPU milliseconds per lifecycle of the
// n done meanwhile, busiest first. A process absent from the first sample counts from 0.
func cpuBreakdown(from, to cpuSample, n int) string {
	wall := to.at.Sub(from.at)
	type row struct {
		name string
		cpu  time.Duration
	}
	var rows []row
	byName, total := cpuSpent(from, to)
	for name, d := range byName {
		if d > 0 {
			rows = append(rows, row{name, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return int(b.cpu - a.cpu) })
	perLifecycle := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(n, 1)) }
	var sb strings.Builder
	fmt.Fprintf(&sb, "CPU over %s: %.2f cores, %.3f ms per lifecycle:", wall.Round(time.Millisecond),
		total.Seconds()/wall.Seconds(), perLifecycle(total))
	for i, r := range rows {
		sep := ";"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&sb, "%s %s %.2f cores %.3f ms", sep, r.name, r.cpu.Seconds()/wall.Seconds(), perLifecycle(r.cpu))
	}
	return sb.String()
}
