package check

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/testkit"
)

// The NATS authorization of the manifests (issue 16 item 1).
const (
	// authInclude is how nats.conf takes the users (auth.conf beside it in the ConfigMap).
	authInclude = "include auth.conf"
	// nkeysSecret holds NKEY_<USER>, the users' public keys, for the NATS pods.
	nkeysSecret = "payplat-nats-nkeys"
	// tlsSecret holds the NATS servers' certificate, key and CA; tlsDir is where they are.
	tlsSecret = "nats-tls"
	tlsDir    = "/etc/nats-tls/"
)

// natsUserVars are values for the NKEY_<USER> variables of auth.conf: fresh public user keys.
func natsUserVars() (map[string]string, error) {
	vars := map[string]string{}
	for _, name := range natsauth.Names() {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, err
		}
		if vars[natsauth.EnvVar(name)], err = kp.PublicKey(); err != nil {
			return nil, err
		}
	}
	return vars, nil
}

// checkNATSAuth: nats.conf includes auth.conf, which is pkg/natsauth's block as generated; the
// server reads it with every user; TLS is on for clients and routes; the pods get the users'
// public keys and the certificate; a NetworkPolicy guards the pods.
func checkNATSAuth(p *problems, objs []Object, sts *appsv1.StatefulSet, cm *corev1.ConfigMap, c *corev1.Container) (string, map[string]string) {
	conf := cm.Data["nats.conf"]
	if !strings.Contains(conf, authInclude) {
		p.addf("nats: nats.conf does not %q: the servers would take clients without credentials", authInclude)
	}
	if got, want := cm.Data["auth.conf"], natsauth.ServerConfig(natsauth.EnvRef); got != want {
		p.addf("nats: ConfigMap/nats-config auth.conf differs from pkg/natsauth's users: paste `payplat-ctl nats server-config --env`")
	}
	vars, err := natsUserVars()
	p.add(err)
	if !slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool {
		return e.SecretRef != nil && e.SecretRef.Name == nkeysSecret
	}) {
		p.addf("nats: the nats container does not take the users' public keys (envFrom secretRef %s)", nkeysSecret)
	}
	if !mountsSecret(sts.Spec.Template.Spec, c, tlsSecret, strings.TrimSuffix(tlsDir, "/")) {
		p.addf("nats: the nats container does not mount Secret %s at %s", tlsSecret, tlsDir)
	}
	np := Find[networkingv1.NetworkPolicy](objs, "NetworkPolicy", "nats")
	if np == nil || np.Spec.PodSelector.MatchLabels["app.kubernetes.io/name"] != "nats" || len(np.Spec.Ingress) == 0 {
		p.addf("nats: NetworkPolicy/nats selecting the nats pods with ingress rules is missing")
	}
	// The server reads auth.conf where nats.conf includes it; inlined here so that the
	// variables given to the check apply to it.
	return strings.Replace(conf, authInclude, cm.Data["auth.conf"], 1), vars
}

// checkNATSOptions: what the server made of the configuration has every user, and TLS.
func checkNATSOptions(p *problems, where string, nkeyUsers int, tls, routeTLS bool) {
	if nkeyUsers != len(natsauth.Users()) {
		p.addf("%s: the server knows %d NKey users, pkg/natsauth %d", where, nkeyUsers, len(natsauth.Users()))
	}
	if !tls {
		p.addf("%s: no TLS for clients", where)
	}
	if !routeTLS {
		p.addf("%s: no TLS on the cluster routes", where)
	}
}

// checkNATSClient: a service's Deployment logs in to NATS as its own user: NATS_CREDS is a file
// of the Secret payplat-nats-<service> mounted for it, and NATS_CA one of Secret nats-tls.
func checkNATSClient(p *problems, d *appsv1.Deployment, c *corev1.Container, env map[string]string) {
	name := d.Name
	creds, ca := env["NATS_CREDS"], env["NATS_CA"]
	if creds == "" || !mountsSecret(d.Spec.Template.Spec, c, "payplat-nats-"+name, path.Dir(creds)) {
		p.addf("app: Deployment/%s: NATS_CREDS (%q) must be a file of Secret payplat-nats-%s mounted in its container", name, creds, name)
	}
	if ca == "" || !mountsSecret(d.Spec.Template.Spec, c, tlsSecret, path.Dir(ca)) {
		p.addf("app: Deployment/%s: NATS_CA (%q) must be a file of Secret %s mounted in its container", name, ca, tlsSecret)
	}
	if !strings.HasPrefix(env["NATS_URL"], "tls://") {
		p.addf("app: Deployment/%s: NATS_URL %q is not tls://", name, env["NATS_URL"])
	}
}

// mountsSecret tells whether container c mounts, at dir, a volume of spec from Secret secret.
func mountsSecret(spec corev1.PodSpec, c *corev1.Container, secret, dir string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secret {
				return true
			}
		}
	}
	return false
}

// withTestCertificate rewrites the certificate paths of a nats-server configuration (under
// tlsDir, where the Secret is mounted) to a self-signed certificate in dir, so that the
// server's option processing, which loads them, can run.
func withTestCertificate(text, dir string) (string, error) {
	if !strings.Contains(text, tlsDir) {
		return text, nil
	}
	if _, _, _, err := testkit.WriteSelfSignedCert(dir, "nats"); err != nil {
		return "", err
	}
	return strings.ReplaceAll(text, tlsDir, dir+string(filepath.Separator)), nil
}
