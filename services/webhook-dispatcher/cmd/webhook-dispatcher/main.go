// Command webhook-dispatcher runs the webhook-dispatcher service; see the README for its configuration.
package main

import (
	"os"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

func main() {
	os.Exit(svc.MainWith("webhook-dispatcher", service.LoadConfig, service.Options))
}
