// Command merchant runs the merchant service; see the README for its configuration.
package main

import (
	"fmt"
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/merchant/service"
)

func main() {
	cfg, err := service.LoadConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "merchant:", err)
		os.Exit(2)
	}
	os.Exit(svc.Main(service.Options(cfg)))
}
