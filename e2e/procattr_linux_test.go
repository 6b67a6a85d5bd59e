package e2e_test

import "syscall"

// childProcAttr has the kernel send SIGTERM to a child (the nats-server of a test) should the
// test process die without stopping it (a killed `go test`), so no server outlives the tests.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
