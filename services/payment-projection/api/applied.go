// Package api is the payment-projection's contract with the services that import it. The
// projection answers no requests (its tables are read directly, with their schema in
// migrations/); what it offers is the core NATS subjects on which it announces that it has
// applied an event of a payment. The announcements are hints, not facts: a waiter (the gateway,
// for read-your-writes) re-reads the payments table when one arrives and trusts only what it
// reads there. They let the gateway wait for the projection without polling.
package api

import "github.com/payplat/platform/pkg/events"

// AppliedPrefix starts every notification subject. It is outside every JetStream stream's
// subjects.
const AppliedPrefix = "_payplat.payment_applied"

// AppliedSubject returns the subject of the notifications of one payment, and false when the ids
// cannot form a subject (a payment id with '.', '*', '>' or whitespace gets no notifications).
func AppliedSubject(environment, companyID, paymentID string) (string, bool) {
	for _, tok := range []string{environment, companyID, paymentID} {
		if !events.IsToken(tok) {
			return "", false
		}
	}
	return AppliedPrefix + "." + environment + "." + companyID + "." + paymentID, true
}
