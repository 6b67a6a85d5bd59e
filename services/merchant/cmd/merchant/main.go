// Command merchant runs the merchant service; see the README for its configuration.
package main

import (
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/merchant/service"
)

func main() {
	os.Exit(svc.MainWith("merchant", service.LoadConfig, service.Options))
}
