package domain

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/payplat/platform/pkg/validation"
)

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// URLPolicy is what endpoint URLs may be (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_NETWORKS,
// WEBHOOK_ALLOW_ANY_PORT).
type URLPolicy struct {
	AllowHTTP            bool
	AllowPrivateNetworks bool
	AllowAnyPort         bool
}

// AllowedPorts are the ports an endpoint may use unless the policy allows any: the ones HTTPS
// receivers listen on. Any other port would let a partner aim the dispatcher's POSTs at
// whatever else listens on a public host (mail, databases, admin consoles) and read from the
// log whether it answered.
var AllowedPorts = []string{"443", "8443"}

// PortAllowed reports whether u's port may be used.
func (p URLPolicy) PortAllowed(u *url.URL) bool {
	return p.AllowAnyPort || slices.Contains(AllowedPorts, Port(u))
}

// Port returns the port u connects to: the one it names, else its scheme's (443, or 80 for
// http).
func Port(u *url.URL) string {
	switch {
	case u.Port() != "":
		return u.Port()
	case u.Scheme == "http":
		return "80"
	default:
		return "443"
	}
}

// ValidateURL checks an endpoint URL at configuration time: absolute https (http only when
// allowed), a host, port 443 or 8443 (any when allowed), no credentials, no fragment, and no
// literal address that the dial-time guard would refuse anyway. Host names are checked again
// on every dial (DNS can change); scheme and port on every attempt (the policy can change).
func (p URLPolicy) ValidateURL(raw string) (*url.URL, error) {
	const field = "url"
	if raw == "" {
		return nil, validation.Invalid(field, "is required")
	}
	if len(raw) > MaxURLLength || strings.ContainsAny(raw, " \t\r\n") {
		return nil, validation.Invalid(field, "must be a URL of at most 2048 characters without spaces")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, validation.Invalid(field, "must be an absolute https:// URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return nil, validation.Invalid(field, "must use https")
		}
	default:
		return nil, validation.Invalid(field, "must use https")
	}
	if u.User != nil {
		return nil, validation.Invalid(field, "must not contain credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, validation.Invalid(field, "must not contain a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, validation.Invalid(field, "must name a host")
	}
	if ip, err := netip.ParseAddr(host); err == nil && !p.AllowPrivateNetworks {
		if reason := BlockedReason(ip); reason != "" {
			return nil, validation.Invalid(field, "must not point to a "+reason+" address")
		}
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return nil, validation.Invalid(field, "has an invalid port")
		}
	}
	if !p.PortAllowed(u) {
		return nil, validation.Invalid(field, "must use port 443 or 8443")
	}
	return u, nil
}
