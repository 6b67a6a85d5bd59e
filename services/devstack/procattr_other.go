//go:build !linux

package devstack

import "syscall"

// childProcAttr puts a child in its own process group (see the Linux version).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
