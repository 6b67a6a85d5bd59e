//go:build !linux

package testkit

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }

// MachineCPU is only known on Linux.
func MachineCPU() (float64, bool) { return 0, false }

// ProcessCPU is only known on Linux.
func ProcessCPU(int) (float64, bool) { return 0, false }
