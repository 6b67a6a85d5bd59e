// Command payment-projection runs the payment-projection service; see the README for its configuration.
package main

import (
	"fmt"
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/payment-projection/service"
)

func main() {
	cfg, err := service.LoadConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(svc.Main(service.Options(cfg)))
}
