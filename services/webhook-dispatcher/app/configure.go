package app

import (
	"context"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Configure is the endpoint configuration command (POST /api/v1/dashboard/webhooks/config).
type Configure struct {
	CompanyID   string
	Environment string
	// URL, when set, replaces the endpoint URL.
	URL *string
	// Enabled, when set, turns deliveries on or off. A new endpoint with a URL starts enabled.
	Enabled *bool
	// RollSecret replaces the signing secret; the new one is returned once.
	RollSecret bool
}

// Configured is the endpoint after a Configure.
type Configured struct {
	Endpoint domain.Endpoint
	// Secret is the new signing secret in plain text, set only when this command created it
	// (a roll, or the endpoint's first configuration). It is never readable again.
	Secret string
}

// Configure creates or updates the endpoint of a company and environment.
func (d *Dispatcher) Configure(ctx context.Context, cmd Configure) (Configured, error) {
	if cmd.CompanyID == "" {
		return Configured{}, domain.Invalid("company_id", "is required")
	}
	if cmd.Environment != "test" && cmd.Environment != "live" {
		return Configured{}, domain.Invalid("environment", "must be test or live")
	}
	if cmd.URL != nil {
		if _, err := d.cfg.Policy.ValidateURL(*cmd.URL); err != nil {
			return Configured{}, err
		}
	}
	var secret string
	e, err := d.store.UpdateEndpoint(ctx, cmd.CompanyID, cmd.Environment, func(e *domain.Endpoint, exists bool) error {
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
			return domain.Invalid("url", "is required when webhooks are configured for the first time")
		}
		if e.Enabled && e.URL == "" {
			return domain.Invalid("url", "is required to enable webhooks")
		}
		if !cmd.RollSecret && exists {
			return nil
		}
		s, err := domain.NewSecret()
		if err != nil {
			return err
		}
		sealed, err := d.box.Seal(cmd.CompanyID, cmd.Environment, s)
		if err != nil {
			return err
		}
		e.SecretSealed, e.SecretVersion, secret = sealed, e.SecretVersion+1, s
		return nil
	})
	if err != nil {
		return Configured{}, err
	}
	return Configured{Endpoint: e, Secret: secret}, nil
}
