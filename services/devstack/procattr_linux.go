package devstack

import "syscall"

// childProcAttr puts a child in its own process group and has the kernel send it SIGTERM
// should the dev stack die without stopping it (kill -9), so no service outlives the stack.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
