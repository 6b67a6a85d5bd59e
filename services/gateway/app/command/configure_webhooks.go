package command

import (
	"context"

	"github.com/payplat/platform/services/gateway/domain"
)

// ConfigureWebhooks changes the caller's webhook endpoint: its URL, its switch, or its signing
// secret (rolled).
type ConfigureWebhooks struct {
	Principal domain.Principal
	Change    domain.WebhookConfigChange
}

// WebhookConfigurer asks the webhook-dispatcher to change the principal's endpoint; the
// dispatcher checks the URL (HTTPS, a public address) and requires one on the first
// configuration.
type WebhookConfigurer interface {
	Configure(ctx context.Context, p domain.Principal, c domain.WebhookConfigChange) (domain.WebhookConfig, error)
}

// ConfigureWebhooksHandler runs ConfigureWebhooks.
type ConfigureWebhooksHandler struct {
	webhooks WebhookConfigurer
}

// NewConfigureWebhooksHandler returns a ConfigureWebhooksHandler changing through webhooks.
func NewConfigureWebhooksHandler(webhooks WebhookConfigurer) ConfigureWebhooksHandler {
	return ConfigureWebhooksHandler{webhooks: webhooks}
}

// Handle applies the change and returns the endpoint, with its signing secret only when the
// change created it (a roll, or the first configuration).
func (h ConfigureWebhooksHandler) Handle(ctx context.Context, cmd ConfigureWebhooks) (domain.WebhookConfig, error) {
	return h.webhooks.Configure(ctx, cmd.Principal, cmd.Change)
}
