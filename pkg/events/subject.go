package events

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
)

// SubjectParts are the tokens of an event subject <family>.<env>.<company_id>.<event>.
type SubjectParts struct {
	// Family is the first token, for example "payment".
	Family string
	// Env is "test" or "live".
	Env string
	// CompanyID is the company (tenant) the event belongs to.
	CompanyID string
	// Name is the event name within the family, for example "confirmed".
	Name string
	// Type is the event type <family>.<event>, for example "payment.confirmed".
	Type string
}

// Subject formats the subject <family>.<env>.<company_id>.<event>. It does not check its
// arguments; SubjectFor does.
func Subject(family, env, companyID, name string) string {
	return family + "." + env + "." + companyID + "." + name
}

// SubjectFor returns the subject msg is published on, from its type and its meta block. It fails
// (wrapping ErrUnknownType or ErrBadSubject) for a message outside the contract, a missing meta,
// or a company id or environment that cannot form a subject.
func SubjectFor(msg proto.Message) (string, error) {
	s, ok := ForMessage(msg)
	if !ok {
		return "", fmt.Errorf("%w: %T", ErrUnknownType, msg)
	}
	m := Meta(msg)
	if m == nil {
		return "", fmt.Errorf("%w: %s has no meta", ErrBadSubject, s.Type)
	}
	if reason := checkEnv(m.GetEnvironment()); reason != "" {
		return "", fmt.Errorf("%w: meta.environment: %s", ErrBadSubject, reason)
	}
	if reason := checkCompanyID(m.GetCompanyId()); reason != "" {
		return "", fmt.Errorf("%w: meta.company_id: %s", ErrBadSubject, reason)
	}
	return Subject(s.Family, m.GetEnvironment(), m.GetCompanyId(), s.Name), nil
}

// ParseSubject splits an event subject and checks it: four tokens, a known family, env test or
// live, a valid company id and an event name of the family. Errors wrap ErrBadSubject, and also
// ErrUnknownType when only the family or event name is unknown.
func ParseSubject(subject string) (SubjectParts, error) {
	var p SubjectParts
	rest, ok := subject, true
	for _, token := range []*string{&p.Family, &p.Env, &p.CompanyID} {
		if *token, rest, ok = strings.Cut(rest, "."); !ok {
			break
		}
	}
	if !ok || strings.Contains(rest, ".") {
		return SubjectParts{}, fmt.Errorf("%w: %q: want <family>.<env>.<company_id>.<event>", ErrBadSubject, subject)
	}
	p.Name = rest
	if reason := checkEnv(p.Env); reason != "" {
		return SubjectParts{}, fmt.Errorf("%w: %q: env %s", ErrBadSubject, subject, reason)
	}
	if reason := checkCompanyID(p.CompanyID); reason != "" {
		return SubjectParts{}, fmt.Errorf("%w: %q: company id %s", ErrBadSubject, subject, reason)
	}
	s, ok := Lookup(p.Family + "." + p.Name)
	if !ok {
		return SubjectParts{}, fmt.Errorf("%w: %w: %q: no event type %q", ErrBadSubject, ErrUnknownType, subject, p.Family+"."+p.Name)
	}
	p.Type = s.Type // the registry's string: parsing a subject allocates nothing
	return p, nil
}

// checkEnv returns why env is not a valid environment, or "".
func checkEnv(env string) string {
	if env != EnvTest && env != EnvLive {
		return fmt.Sprintf("%q is not %q or %q", env, EnvTest, EnvLive)
	}
	return ""
}

// IsToken reports whether s can stand as one token of a NATS subject: not empty, and without
// '.', '*', '>', whitespace or control characters. Company ids, environments and the ids in
// the platform's notification subjects must be tokens.
func IsToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*>") && !hasSpaceOrControl(s)
}

// checkCompanyID returns why id cannot be a company id (a subject token), or "".
func checkCompanyID(id string) string {
	if id == "" {
		return "is required"
	}
	if !IsToken(id) {
		return fmt.Sprintf("%q must not contain '.', '*', '>', whitespace or control characters", id)
	}
	return ""
}
