package devstack

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Exit says that a child process ended and how (Err nil: exit status 0).
type Exit struct {
	Name string
	Err  error
}

// Supervisor runs child processes, each in its own process group so that a Ctrl-C in the
// terminal reaches only the dev stack, which then stops the children in order. Their output
// goes to an Output, line by line, prefixed with their name.
type Supervisor struct {
	out *Output
	log *slog.Logger

	mu       sync.Mutex
	children []*child
	stopping bool
	exits    chan Exit
}

type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// NewSupervisor returns a Supervisor writing the children's output to out and its own
// messages to log.
func NewSupervisor(out *Output, log *slog.Logger) *Supervisor {
	return &Supervisor{out: out, log: log, exits: make(chan Exit, 64)}
}

// Start starts the program at path as child name with exactly the environment env.
func (s *Supervisor) Start(name, path string, args, env []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return errors.New("supervisor is stopping")
	}
	stdout, stderr := s.out.Prefixed(name), s.out.Prefixed(name)
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = childProcAttr()
	// A grandchild holding the output pipes open must not hang Wait.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	s.children = append(s.children, c)
	s.log.Debug("started", "service", name, "pid", cmd.Process.Pid)
	go s.wait(c, stdout, stderr)
	return nil
}

func (s *Supervisor) wait(c *child, stdout, stderr *LineWriter) {
	err := c.cmd.Wait()
	stdout.Flush()
	stderr.Flush()
	s.mu.Lock()
	stopping := s.stopping
	s.mu.Unlock()
	// Logged before done closes: Stop returns once every done is closed, and what it logged
	// must be in the output by then.
	if stopping {
		s.log.Debug("stopped", "service", c.name, "status", exitStatus(err))
		close(c.done)
		return
	}
	s.log.Error("service exited unexpectedly", "service", c.name, "status", exitStatus(err))
	close(c.done)
	select {
	case s.exits <- Exit{Name: c.name, Err: err}:
	default: // the first exits are enough to act on
	}
}

// Exits delivers the children that end while the supervisor is not stopping them.
func (s *Supervisor) Exits() <-chan Exit { return s.exits }

// Stop sends SIGTERM to every running child's process group, waits up to timeout for them to
// exit (or until hurry is closed; nil never is), then kills those left with SIGKILL. Children
// that end during Stop are not reported on Exits.
func (s *Supervisor) Stop(timeout time.Duration, hurry <-chan struct{}) {
	s.mu.Lock()
	s.stopping = true
	children := append([]*child(nil), s.children...)
	s.mu.Unlock()

	for _, c := range children {
		signalGroup(c, syscall.SIGTERM)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	if !allDone(children, deadline.C, hurry) {
		for _, c := range children {
			select {
			case <-c.done:
			default:
				s.log.Warn("service did not stop in time; killing it", "service", c.name)
				signalGroup(c, syscall.SIGKILL)
			}
		}
	}
	for _, c := range children {
		<-c.done
	}
}

// allDone waits for every child to end, or reports false when timeout fires or hurry closes
// first.
func allDone(children []*child, timeout <-chan time.Time, hurry <-chan struct{}) bool {
	for _, c := range children {
		select {
		case <-c.done:
		case <-timeout:
			return false
		case <-hurry:
			return false
		}
	}
	return true
}

// signalGroup signals the child's process group (its pid: Setpgid) unless the child is gone,
// so that a reused pid is never signalled.
func signalGroup(c *child, sig syscall.Signal) {
	select {
	case <-c.done:
		return
	default:
	}
	if err := syscall.Kill(-c.cmd.Process.Pid, sig); err != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

func exitStatus(err error) string {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &exit):
		return exit.String()
	default:
		return err.Error()
	}
}

// MissingBinaries returns the names whose binary is not an executable file in binDir.
func MissingBinaries(binDir string, names []string) []string {
	var missing []string
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(binDir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}
