package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one supervised child process: the chaos run kills, freezes and restarts it on purpose,
// and, like an orchestrator, restarts it when it exits on its own (counted as a crash).
type proc struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string
	events  *Events

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	down    bool // stopped on purpose: not restarted when it exits
	paused  bool
	closing bool
	crashes int
}

func newProc(name, path string, args, env []string, logPath string, ev *Events) *proc {
	return &proc{name: name, path: path, args: args, env: env, logPath: logPath, events: ev}
}

// start starts the process and watches it.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.startLocked()
}

func (p *proc) startLocked() error {
	if p.cmd != nil {
		return fmt.Errorf("%s is running", p.name)
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a Ctrl-C reaches only the chaos run); SIGKILL should the chaos run
	// die first, so no service outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.down, p.paused = cmd, done, false, false
	go p.watch(cmd, done)
	return nil
}

// watch waits for the process and restarts it after a second when it ended on its own.
func (p *proc) watch(cmd *exec.Cmd, done chan struct{}) {
	err := cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == cmd {
		p.cmd = nil
	}
	close(done) // after cmd is cleared: whoever waited on done may start the process again
	if p.down || p.closing {
		return
	}
	p.crashes++
	p.events.Logf("crash", p.name, "exited on its own (%v); restarting it in 1s", err)
	time.AfterFunc(time.Second, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cmd == nil && !p.down && !p.closing {
			if err := p.startLocked(); err != nil {
				p.events.Logf("crash", p.name, "restart failed: %v", err)
			}
		}
	})
}

// kill sends SIGKILL and waits until the process is gone; it stays down until start.
func (p *proc) kill() {
	p.signalAndWait(syscall.SIGKILL, 0)
}

// stop sends SIGTERM, waits up to grace, then SIGKILL; it stays down until start.
func (p *proc) stop(grace time.Duration) {
	p.signalAndWait(syscall.SIGTERM, grace)
}

func (p *proc) signalAndWait(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	p.down = true
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen process cannot act on SIGTERM
	_ = cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-done:
			return
		case <-time.After(grace):
			_ = cmd.Process.Kill()
		}
	}
	<-done
}

// pause freezes the process (SIGSTOP), as a long GC pause or a stalled network would.
func (p *proc) pause() error { return p.signal(syscall.SIGSTOP, true) }

// resume thaws it (SIGCONT).
func (p *proc) resume() error { return p.signal(syscall.SIGCONT, false) }

func (p *proc) signal(sig syscall.Signal, paused bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return errors.New(p.name + " is not running")
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return err
	}
	p.paused = paused
	return nil
}

// ensureRunning thaws the process, or starts it when it is down.
func (p *proc) ensureRunning() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return p.startLocked()
	}
	if p.paused {
		p.paused = false
		return p.cmd.Process.Signal(syscall.SIGCONT)
	}
	return nil
}

// pid is the running process's id, 0 when down.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// close stops the process for good.
func (p *proc) close(grace time.Duration) {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.stop(grace)
}

// crashCount is how often the process exited on its own.
func (p *proc) crashCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crashes
}

// Kill kills the process with SIGKILL and waits until it is gone; it stays down until Start.
func (p *proc) Kill() { p.kill() }

// Start starts the process again.
func (p *proc) Start() error { return p.start() }
