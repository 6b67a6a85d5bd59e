// Command pool runs the pool service; see the README for its configuration.
package main

import (
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/pool/service"
)

func main() {
	os.Exit(svc.MainWith("pool", service.LoadConfig, service.Options))
}
