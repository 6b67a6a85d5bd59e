package testkit_test

import (
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/testkit"
)

// NATSProcess runs a real server in another process, with JetStream, whose CPU time can be read.
func TestNATSProcessIsAnotherProcessWithJetStream(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process CPU times are read from /proc")
	}
	t.Parallel()
	url, pid := testkit.NATSProcess(t)
	if pid == os.Getpid() || pid <= 0 {
		t.Fatalf("server pid %d (test %d)", pid, os.Getpid())
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("t.x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, ok := testkit.ProcessCPU(pid); !ok {
		t.Fatal("the server's CPU time cannot be read")
	}
}

// ProcessCPU and MachineCPU agree with the kernel's own accounting of this process.
func TestCPUTimesFollowTheKernelsAccounting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU times are read from /proc")
	}
	cpu := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	p0, ok1 := testkit.ProcessCPU(os.Getpid())
	m0, ok2 := testkit.MachineCPU()
	r0 := cpu()
	if !ok1 || !ok2 {
		t.Fatal("/proc cannot be read")
	}
	x := 0
	for cpu()-r0 < 0.5 {
		for i := range 1_000_000 {
			x += i
		}
	}
	p1, _ := testkit.ProcessCPU(os.Getpid())
	m1, _ := testkit.MachineCPU()
	r1 := cpu()
	// /proc counts in hundredths of a second.
	if d := (p1 - p0) - (r1 - r0); d < -0.05 || d > 0.05 {
		t.Fatalf("process CPU %.2f s, the kernel's rusage %.2f s (%d)", p1-p0, r1-r0, x)
	}
	if m1-m0 < (r1-r0)-0.05 {
		t.Fatalf("machine busy %.2f s while this process used %.2f s", m1-m0, r1-r0)
	}
}
