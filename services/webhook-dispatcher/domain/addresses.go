package domain

import (
	"net"
	"net/netip"
)

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// Site-local (deprecated by RFC 3879), still routed inside some networks like ULA.
	siteLocal = netip.MustParsePrefix("fec0::/10")
)

// reservedRanges are the special-purpose ranges (RFC 6890 and its successors) that are not
// globally reachable, so no webhook may target them.
var reservedRanges = prefixes(
	"0.0.0.0/8",      // "this network"
	"192.0.0.0/24",   // IETF protocol assignments
	"198.18.0.0/15",  // benchmarking (RFC 2544)
	"240.0.0.0/4",    // reserved for future use
	"2001::/32",      // Teredo
	"2001:db8::/32",  // documentation
	"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
	// IPv4-compatible addresses (::a.b.c.d, deprecated by RFC 4291): some stacks route them as
	// the IPv4 address they carry, so none is a legitimate webhook target.
	"::/96",
	"100::/64",     // discard-only (RFC 6666)
	"2001:2::/48",  // benchmarking (RFC 5180)
	"2001:20::/28", // ORCHIDv2 (RFC 7343)
	"3fff::/20",    // documentation (RFC 9637)
)

func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

// inAny reports whether ip lies in one of ranges.
func inAny(ip netip.Addr, ranges []netip.Prefix) bool {
	for _, r := range ranges {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}

// BlockedReason says why a webhook may not be sent to ip ("loopback", "private", ...), or ""
// when ip is a public unicast address. IPv4-mapped IPv6 addresses are judged as the IPv4
// address they carry, and so are NAT64 and 6to4 addresses that embed one.
func BlockedReason(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		if embedded, ok := embeddedIPv4(ip); ok {
			if r := BlockedReason(embedded); r != "" {
				return r
			}
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}):
		return "metadata"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsPrivate(), siteLocal.Contains(ip):
		return "private"
	case cgnat.Contains(ip):
		return "shared (CGNAT)"
	case inAny(ip, reservedRanges):
		return "reserved"
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16)
// address.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// BlockedAddressError is the SSRF guard's refusal of an address; it matches ErrBlockedAddress.
type BlockedAddressError struct {
	Addr   string
	Reason string
}

func (e *BlockedAddressError) Error() string {
	return "blocked address: " + e.Addr + " is a " + e.Reason + " address"
}

// Is makes errors.Is(err, ErrBlockedAddress) match.
func (e *BlockedAddressError) Is(target error) bool { return target == ErrBlockedAddress }

// CheckDialAddress is the dial-time guard: address is the resolved host:port about to be
// connected to. Anything but a public unicast IP address is refused.
func CheckDialAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &BlockedAddressError{Addr: host, Reason: "non-IP"}
	}
	if reason := BlockedReason(ip); reason != "" {
		return &BlockedAddressError{Addr: ip.String(), Reason: reason}
	}
	return nil
}
