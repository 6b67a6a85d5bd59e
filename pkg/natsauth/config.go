package natsauth

import (
	"fmt"
	"strconv"
	"strings"
)

// KeyRef writes the nkey value of a user in the server configuration: a quoted public key
// (Literal) or a reference to an environment variable (EnvRef, the manifests' form).
type KeyRef func(user string) string

// Literal refers to each user by its public key in keys (Keys.Public).
func Literal(keys map[string]string) KeyRef {
	return func(user string) string { return strconv.Quote(keys[user]) }
}

// EnvRef refers to each user's public key by the environment variable EnvVar(user), which
// nats-server resolves when it reads its configuration.
func EnvRef(user string) string { return "$" + EnvVar(user) }

// EnvVar is the environment variable that holds user's public key on the NATS servers of the
// manifests: NKEY_ and the user's name in capitals, dashes as underscores.
func EnvVar(user string) string {
	return "NKEY_" + strings.ToUpper(strings.ReplaceAll(user, "-", "_"))
}

// ServerConfig renders the authorization block of nats-server's configuration: one nkey user
// per entry of Users with its permissions. Include it in (or append it to) the server's
// configuration; every node of a cluster gets the same block.
func ServerConfig(key KeyRef) string {
	var b strings.Builder
	b.WriteString("# Generated from pkg/natsauth (natsauth.ServerConfig): one user per service, per family of\n")
	b.WriteString("# publishers and for operators. Do not edit by hand; see docs/SECURITY.md.\n")
	b.WriteString("authorization {\n  users = [\n")
	for _, u := range Users() {
		fmt.Fprintf(&b, "    # %s: %s\n", u.Name, u.Description)
		fmt.Fprintf(&b, "    {\n      nkey: %s\n", key(u.Name))
		if u.All {
			b.WriteString("      permissions: {\n        publish: {allow: [\">\"]}\n        subscribe: {allow: [\">\"]}\n      }\n")
		} else {
			p := u.Permissions
			b.WriteString("      permissions: {\n")
			writeRule(&b, "publish", p.PublishAllow, p.PublishDeny)
			writeRule(&b, "subscribe", p.SubscribeAllow, p.SubscribeDeny)
			if p.AllowResponses {
				b.WriteString("        allow_responses: true\n")
			}
			b.WriteString("      }\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

func writeRule(b *strings.Builder, kind string, allow, deny []string) {
	fmt.Fprintf(b, "        %s: {\n          allow: %s\n", kind, list(allow))
	if len(deny) > 0 {
		fmt.Fprintf(b, "          deny: %s\n", list(deny))
	}
	b.WriteString("        }\n")
}

// list writes subjects as a list of quoted strings: unquoted, "$JS.API…" would be read as a
// variable reference.
func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
