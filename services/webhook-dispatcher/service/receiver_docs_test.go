package service_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/events"
)

// codeBlock returns the first fenced block of lang in the receiver documentation.
func codeBlock(t *testing.T, lang string) string {
	t.Helper()
	// docs/webhooks.md of the repository, through a symlink inside this module (go test only
	// caches on files under the module root).
	doc, err := os.ReadFile("testdata/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("no %s block in docs/webhooks.md", lang)
	}
	return string(m[1])
}

// snippetCase is one delivery handed to a documented verification snippet, and the answers
// expected from its two checks.
type snippetCase struct {
	Secret  string            `json:"secret"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	Want    string            `json:"-"`
}

const goHarness = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	var c struct {
		Secret  string            ` + "`json:\"secret\"`" + `
		Body    string            ` + "`json:\"body\"`" + `
		Headers map[string]string ` + "`json:\"headers\"`" + `
	}
	if err := json.NewDecoder(os.Stdin).Decode(&c); err != nil {
		panic(err)
	}
	h := c.Headers
	fmt.Println(VerifySignature(c.Secret, []byte(c.Body), h["X-Webhook-Signature"]),
		VerifyStandard(c.Secret, h["webhook-id"], h["webhook-timestamp"], h["webhook-signature"], []byte(c.Body), time.Now()))
}
`

const nodeHarness = `
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const c = JSON.parse(input), h = c.headers, body = Buffer.from(c.body, "utf8");
  console.log(verifySignature(c.secret, body, h["X-Webhook-Signature"]),
    verifyStandard(c.secret, h["webhook-id"], h["webhook-timestamp"], h["webhook-signature"], body,
      Math.floor(Date.now() / 1000)));
});
`

const pythonHarness = `
import json, sys
c = json.load(sys.stdin)
h, body = c["headers"], c["body"].encode()
print(str(verify_signature(c["secret"], body, h["X-Webhook-Signature"])).lower(),
      str(verify_standard(c["secret"], h["webhook-id"], h["webhook-timestamp"], h["webhook-signature"], body)).lower())
`

// The Go, Node.js and Python snippets of docs/webhooks.md verify real deliveries, and refuse a
// tampered body and a wrong secret.
func TestDocumentedReceiverSnippetsVerifyRealDeliveries(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	cfg := h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypeDeviceRegistered, "acme"))
	h.waitDeliveries("acme", 1, 1)
	hit := rc.got()[0]
	headers := map[string]string{}
	for _, k := range []string{"X-Webhook-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"} {
		headers[k] = hit.header.Get(k)
	}
	other := h.configure("other", rc.srv.URL, false)
	cases := []snippetCase{
		{Secret: cfg.Secret, Body: string(hit.body), Headers: headers, Want: "true true"},
		{Secret: cfg.Secret, Body: strings.Replace(string(hit.body), `"device_id"`, `"device_id" `, 1), Headers: headers,
			Want: "false false"},
		{Secret: other.Secret, Body: string(hit.body), Headers: headers, Want: "false false"},
	}

	goDir := t.TempDir()
	write(t, filepath.Join(goDir, "go.mod"), "module receiver\n\ngo 1.26\n")
	write(t, filepath.Join(goDir, "verify.go"), "package main\n\n"+codeBlock(t, "go"))
	write(t, filepath.Join(goDir, "main.go"), goHarness)
	build := exec.Command("go", "build", "-o", "receiver", ".")
	build.Dir = goDir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Go snippet does not build: %v\n%s", err, out)
	}
	nodeFile := filepath.Join(t.TempDir(), "verify.js")
	write(t, nodeFile, codeBlock(t, "js")+nodeHarness)
	pyFile := filepath.Join(t.TempDir(), "verify.py")
	write(t, pyFile, codeBlock(t, "python")+pythonHarness)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required to run the documented Node.js snippet")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required to run the documented Python snippet")
	}
	for _, c := range cases {
		input, _ := json.Marshal(c)
		for name, cmd := range map[string]*exec.Cmd{
			"go":     exec.Command(filepath.Join(goDir, "receiver")),
			"node":   exec.Command(node, nodeFile),
			"python": exec.Command(python, pyFile),
		} {
			cmd.Stdin = bytes.NewReader(input)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s snippet: %v\n%s", name, err, out)
			}
			if got := strings.TrimSpace(string(out)); got != c.Want {
				t.Errorf("%s snippet answered %q, want %q", name, got, c.Want)
			}
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
