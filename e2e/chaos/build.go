package chaos

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/payplat/platform/services/devstack"
)

// Programs are the binaries a chaos run needs in its bin directory: the five services, the
// operator CLI (projections verify) and nats-server.
var Programs = append(append([]string{}, devstack.Services...), "payplat-ctl", "nats-server")

// Build builds every program of Programs into dir from the workspace the go command finds (the
// go build cache makes every build after the first a link).
func Build(dir string) error {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return fmt.Errorf("finding the workspace: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return fmt.Errorf("chaos must be built inside the project's Go workspace (go.work)")
	}
	root := filepath.Dir(work)
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range devstack.Services {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	args = append(args, "./services/ctl/cmd/payplat-ctl")
	if err := run(root, "go", args...); err != nil {
		return err
	}
	// The NATS server runs as its own process, built from the module the platform uses.
	return run(filepath.Join(root, "pkg"), "go", "build", "-o", filepath.Join(dir, "nats-server"), "github.com/nats-io/nats-server/v2")
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, b)
	}
	return nil
}
