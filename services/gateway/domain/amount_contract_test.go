package domain_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/payplat/platform/api"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/gateway/domain"
)

// schemaPattern returns the pattern of a component schema of the OpenAPI document.
func schemaPattern(t *testing.T, name string) *regexp.Regexp {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Pattern string `json:"pattern"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Components.Schemas[name].Pattern
	if p == "" {
		t.Fatalf("no pattern for %s", name)
	}
	return regexp.MustCompile(p)
}

// amountCorpus is the edge cases of amounts around every limit, then random strings of the
// characters amounts are made of.
func amountCorpus() []string {
	out := []string{"", "0", "0.0", "0.00", "0.000000", "0.0000000", "0.000001", "0.1", "00", "01", "1", "1.", ".5",
		"-1", "+1", "1e3", " 1", "12.50", "12.1234567", "999999999.999999", "1000000000", "1000000000.0",
		"1000000000.000000", "1000000000.0000000", "1000000000.000001", "1000000000.1", "1000000001",
		"9999999999", "10000000000", "9223372036854.775807", "9223372036854.775808", "0.010000", "0.000010",
		"0.100000", "0.00001", "0.0001", "0.001", "0.01", "100000000", "999999999", "1000000000.00", "0.0000001"}
	rnd := rand.New(rand.NewPCG(41, 41))
	alphabet := "0123456789.0000-"
	for range 50_000 {
		n := 1 + rnd.IntN(18)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		out = append(out, string(b))
	}
	for range 5_000 { // near the maximum
		out = append(out, fmt.Sprintf("%d.%06d", 999_999_990+rnd.IntN(20), rnd.IntN(1_000_000)))
	}
	return out
}

// The OpenAPI document says exactly what the gateway accepts (issue 41: the maximum of one
// operation; issue 47: "0" was schema-valid but refused): a generated client that validates its
// input never sends an amount the server refuses, and never refuses one it accepts.
func TestTheDocumentsAmountPatternsAreExactlyWhatTheGatewayAccepts(t *testing.T) {
	amount, positive := schemaPattern(t, "AmountInput"), schemaPattern(t, "PositiveAmountInput")
	for _, s := range amountCorpus() {
		_, err := money.ParseAmount(s)
		if got, want := amount.MatchString(s), err == nil; got != want {
			t.Errorf("AmountInput %q: pattern %v, low_threshold accepted %v", s, got, want)
		}
		_, err = domain.NewPaymentRequest("m", &s, nil)
		if got, want := positive.MatchString(s), err == nil; got != want {
			t.Errorf("PositiveAmountInput %q: pattern %v, payment amount accepted %v (%v)", s, got, want, err)
		}
	}
}
