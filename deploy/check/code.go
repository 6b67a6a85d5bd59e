package check

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"

	"github.com/caarlos0/env/v11"

	"github.com/payplat/platform/pkg/svc"
	gateway "github.com/payplat/platform/services/gateway/service"
	merchant "github.com/payplat/platform/services/merchant/service"
	projection "github.com/payplat/platform/services/payment-projection/service"
	dispatcher "github.com/payplat/platform/services/webhook-dispatcher/service"
)

// Services are the five services, by the name of their Deployment, compose service, image and
// command.
var Services = []string{"gateway", "merchant", "pool", "payment-projection", "webhook-dispatcher"}

// configs are the configuration structs each service loads from its environment at start: the
// variables it reads are their `env` tags (pkg/config, caarlos0/env). The gateway loads its own
// Config; the other four load svc.Config (pkg/svc.Main) and their own.
var configs = map[string][]any{
	"gateway":            {&gateway.Config{}},
	"merchant":           {&svc.Config{}, &merchant.Config{}},
	"pool":               {&svc.Config{}},
	"payment-projection": {&svc.Config{}, &projection.Config{}},
	"webhook-dispatcher": {&svc.Config{}, &dispatcher.Config{}},
}

// EnvNames returns the environment variables service reads.
func EnvNames(service string) (map[string]bool, error) {
	cfgs, ok := configs[service]
	if !ok {
		return nil, fmt.Errorf("unknown service %q", service)
	}
	// The PostgreSQL driver (pgx) reads PGPASSWORD when DATABASE_URL carries none: the
	// manifests pass each service's role password so, from the role's Secret.
	// The Go runtime of every service reads GOGC and GOMEMLIMIT (its collector).
	names := map[string]bool{"PGPASSWORD": true, "GOGC": true, "GOMEMLIMIT": true}
	for _, c := range cfgs {
		params, err := env.GetFieldParams(c)
		if err != nil {
			return nil, err
		}
		for _, p := range params {
			names[p.Key] = true
		}
	}
	return names, nil
}

// unknownNames lists, sorted, the names a service is given but does not read.
func unknownNames(service string, given []string) ([]string, error) {
	known, err := EnvNames(service)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range given {
		if !known[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// port is the port of a listen address such as ":8080" or "0.0.0.0:8081".
func port(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("listen address %q: %w", addr, err)
	}
	return strconv.Atoi(p)
}

// problems collects what a check found.
type problems struct{ errs []error }

func (p *problems) addf(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

func (p *problems) add(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

func (p *problems) err() error { return joinErrors(p.errs) }

func joinErrors(errs []error) error { return errors.Join(errs...) }
