package adapters

import (
	"fmt"
	"testing"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// The set of payments written early answers yes for every payment added (a reopened payment
// is never missed: Finish would leave it with two rows) and, this far below its capacity, no
// for the others (a yes makes Finish scan the table for nothing).
func TestWrittenSetHasNoFalseNegatives(t *testing.T) {
	var w writtenSet
	key := func(i int) domain.Key {
		return domain.Key{CompanyID: fmt.Sprintf("company-%d", i%7), Environment: "test", PaymentID: fmt.Sprint(i)}
	}
	if w.mayHave(key(0)) {
		t.Fatal("an empty set has a key")
	}
	for i := range 10_000 {
		w.add(key(i))
	}
	for i := range 10_000 {
		if !w.mayHave(key(i)) {
			t.Fatalf("key %d added but not found", i)
		}
	}
	falsePositives := 0
	for i := 10_000; i < 110_000; i++ {
		if w.mayHave(key(i)) {
			falsePositives++
		}
	}
	// Expected far below one: one is already a broken hash.
	if falsePositives > 0 {
		t.Fatalf("%d false positives in 100,000 keys never added", falsePositives)
	}
	if other := (domain.Key{CompanyID: "company-1", Environment: "live", PaymentID: "1"}); w.mayHave(other) {
		t.Fatal("the same payment id in another environment is reported written")
	}
}
