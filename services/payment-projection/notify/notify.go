// Package notify names the core NATS subjects on which the payment-projection announces that
// it has applied an event of a payment. The announcements are hints, not facts: a waiter (the
// gateway, for read-your-writes) re-reads the payments table when one arrives and trusts only
// what it reads there. They let the gateway wait for the projection without polling.
package notify

import "strings"

// Prefix starts every notification subject. It is outside every JetStream stream's subjects.
const Prefix = "_payplat.payment_applied"

// Subject returns the subject of the notifications of one payment, and false when the ids
// cannot form a subject (a payment id with '.', '*', '>' or whitespace gets no notifications).
func Subject(environment, companyID, paymentID string) (string, bool) {
	for _, tok := range []string{environment, companyID, paymentID} {
		if tok == "" || strings.ContainsAny(tok, ".*> \t\r\n") {
			return "", false
		}
	}
	return Prefix + "." + environment + "." + companyID + "." + paymentID, true
}
