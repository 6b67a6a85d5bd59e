// Package command holds the webhook-dispatcher's request-reply use cases, one per file: the
// endpoint configuration, the manual retry and the cron run of due retries.
package command

import (
	"context"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// ConfigureEndpoint creates or updates the endpoint of a company and environment
// (POST /api/v1/dashboard/webhooks/config).
type ConfigureEndpoint struct {
	CompanyID   string
	Environment string
	// URL, when set, replaces the endpoint URL.
	URL *string
	// Enabled, when set, turns deliveries on or off. A new endpoint with a URL starts enabled.
	Enabled *bool
	// RollSecret replaces the signing secret; the new one is returned once.
	RollSecret bool
}

// ConfiguredEndpoint is the endpoint after a ConfigureEndpoint.
type ConfiguredEndpoint struct {
	Endpoint domain.Endpoint
	// Secret is the new signing secret in plain text, set only when this command created it
	// (a roll, or the endpoint's first configuration). It is never readable again.
	Secret string
}

// ConfigureEndpointHandler handles ConfigureEndpoint.
type ConfigureEndpointHandler struct {
	repo   app.Repository
	policy domain.URLPolicy
	box    *domain.SecretBox
}

// NewConfigureEndpointHandler returns a handler that stores endpoints in repo, admits their
// URLs under policy and seals their signing secrets with box.
func NewConfigureEndpointHandler(repo app.Repository, policy domain.URLPolicy, box *domain.SecretBox) ConfigureEndpointHandler {
	return ConfigureEndpointHandler{repo: repo, policy: policy, box: box}
}

// Handle validates the command and creates or updates the endpoint.
func (h ConfigureEndpointHandler) Handle(ctx context.Context, cmd ConfigureEndpoint) (ConfiguredEndpoint, error) {
	if cmd.CompanyID == "" {
		return ConfiguredEndpoint{}, validation.Invalid("company_id", "is required")
	}
	if cmd.Environment != "test" && cmd.Environment != "live" {
		return ConfiguredEndpoint{}, validation.Invalid("environment", "must be test or live")
	}
	if cmd.URL != nil {
		if _, err := h.policy.ValidateURL(*cmd.URL); err != nil {
			return ConfiguredEndpoint{}, err
		}
	}
	var secret string
	e, err := h.repo.UpdateEndpoint(ctx, cmd.CompanyID, cmd.Environment, func(e *domain.Endpoint, exists bool) error {
		if cmd.URL != nil {
			e.URL = *cmd.URL
		}
		switch {
		case cmd.Enabled != nil:
			e.Enabled = *cmd.Enabled
		case !exists:
			e.Enabled = e.URL != ""
		}
		if !exists && e.URL == "" {
			// Nothing to deliver to, and a secret for no endpoint: refuse rather than store it.
			return validation.Invalid("url", "is required when webhooks are configured for the first time")
		}
		if e.Enabled && e.URL == "" {
			return validation.Invalid("url", "is required to enable webhooks")
		}
		if !cmd.RollSecret && exists {
			return nil
		}
		s, err := domain.NewSecret()
		if err != nil {
			return err
		}
		sealed, err := h.box.Seal(cmd.CompanyID, cmd.Environment, s)
		if err != nil {
			return err
		}
		e.SecretSealed, e.SecretVersion, secret = sealed, e.SecretVersion+1, s
		return nil
	})
	if err != nil {
		return ConfiguredEndpoint{}, err
	}
	return ConfiguredEndpoint{Endpoint: e, Secret: secret}, nil
}
