package ports_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/payplat/platform/api/apitest"
)

// Every error code the API's code answers with is in the document's ErrorCode, and the
// document lists no code the API never answers with (the dashboard's HTML-only CSRF_REJECTED
// aside). The codes are read from this package's sources, where the error table (errors.go)
// spells them.
func TestDocumentListsEveryErrorCode(t *testing.T) {
	t.Parallel()
	doc, err := apitest.Document()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range doc.Components.Schemas["ErrorCode"].Value.Enum {
		documented = append(documented, v.(string))
	}
	code := regexp.MustCompile(`Code: *"([A-Z_]+)"`)
	emitted := map[string]bool{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !regexp.MustCompile(`^[a-z_]+\.go$`).MatchString(e.Name()) || regexp.MustCompile(`_test\.go$`).MatchString(e.Name()) {
			continue
		}
		src, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(src), -1) {
			emitted[m[1]] = true
		}
	}
	if len(emitted) < 10 {
		t.Fatalf("found only %d codes in the sources: %v", len(emitted), emitted)
	}
	for c := range emitted {
		if !slices.Contains(documented, c) {
			t.Errorf("the API answers %s, which the document's ErrorCode lacks", c)
		}
	}
	for _, c := range documented {
		if !emitted[c] {
			t.Errorf("the document's ErrorCode lists %s, which the API never answers", c)
		}
	}
}
