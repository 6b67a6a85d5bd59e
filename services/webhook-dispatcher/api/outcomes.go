package api

import (
	"encoding/json"

	"github.com/payplat/platform/pkg/events"
)

// OutcomePrefix starts the core NATS subjects on which the webhook-dispatcher announces each
// recorded delivery attempt, for the gateway's dashboard to refresh its webhook views without
// polling. It is outside every JetStream stream's subjects. An announcement is a hint, not a
// fact: the delivery log (table webhooks.deliveries) stays the truth, and a reader re-reads it
// when one arrives. A lost announcement (a NATS reconnect) only delays a refresh.
const OutcomePrefix = "_payplat.webhook_outcome"

// OutcomeSubject returns the subject of one company's outcomes in one environment, and false
// when the ids cannot form a subject.
func OutcomeSubject(environment, companyID string) (string, bool) {
	for _, tok := range []string{environment, companyID} {
		if !events.IsToken(tok) {
			return "", false
		}
	}
	return OutcomePrefix + "." + environment + "." + companyID, true
}

// Outcome is the body of an announcement: which delivery, of which event, now in which status
// after how many attempts. Nothing secret: no payload, URL or response.
type Outcome struct {
	DeliveryID string `json:"delivery_id"`
	EventType  string `json:"event_type"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
}

// Marshal encodes o as the announcement's body.
func (o Outcome) Marshal() []byte {
	b, _ := json.Marshal(o) // a struct of strings and an int always encodes
	return b
}

// ParseOutcome decodes an announcement's body.
func ParseOutcome(data []byte) (Outcome, error) {
	var o Outcome
	err := json.Unmarshal(data, &o)
	return o, err
}
