// Command payment-projection runs the payment-projection service; see the README for its configuration.
package main

import (
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/payment-projection/service"
)

func main() {
	os.Exit(svc.MainWith("payment-projection", service.LoadConfig, service.Options))
}
