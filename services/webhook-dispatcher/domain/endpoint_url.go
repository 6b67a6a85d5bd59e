package domain

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// URLPolicy is what endpoint URLs may be (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_NETWORKS).
type URLPolicy struct {
	AllowHTTP            bool
	AllowPrivateNetworks bool
}

// ValidateURL checks an endpoint URL at configuration time: absolute https (http only when
// allowed), a host, no credentials, no fragment, and no literal address that the dial-time guard
// would refuse anyway. Host names are checked again on every dial (DNS can change).
func (p URLPolicy) ValidateURL(raw string) (*url.URL, error) {
	const field = "url"
	if raw == "" {
		return nil, Invalid(field, "is required")
	}
	if len(raw) > MaxURLLength || strings.ContainsAny(raw, " \t\r\n") {
		return nil, Invalid(field, "must be a URL of at most 2048 characters without spaces")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, Invalid(field, "must be an absolute https:// URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return nil, Invalid(field, "must use https")
		}
	default:
		return nil, Invalid(field, "must use https")
	}
	if u.User != nil {
		return nil, Invalid(field, "must not contain credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, Invalid(field, "must not contain a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, Invalid(field, "must name a host")
	}
	if ip, err := netip.ParseAddr(host); err == nil && !p.AllowPrivateNetworks {
		if reason := BlockedReason(ip); reason != "" {
			return nil, Invalid(field, "must not point to a "+reason+" address")
		}
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return nil, Invalid(field, "has an invalid port")
		}
	}
	return u, nil
}
