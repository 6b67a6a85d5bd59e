package testkit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// FreePorts returns the first of n consecutive loopback ports nobody listens on right now, for
// a server that a test starts in another process. They are taken below the kernel's ephemeral
// range (32768 and up): a port found free there, as Listen(":0") finds them, can be taken a
// moment later as the source port of any outgoing connection of the parallel test processes,
// and the server then fails to bind it.
func FreePorts(t testing.TB, n int) int {
	t.Helper()
	base, err := FreePortRange(n)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// FreePortRange is FreePorts for programs that are not tests (the chaos run).
func FreePortRange(n int) (int, error) {
	for range 200 {
		base := 20000 + rand.IntN(12000-n)
		ok := true
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free loopback ports")
}
