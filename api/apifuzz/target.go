package apifuzz

import (
	"math/rand/v2"
	"net/http"
)

// Target is the running gateway and the credentials and ids the generator draws from.
type Target struct {
	BaseURL string
	// HTTP sends the requests; nil uses a client with a few idle connections per worker.
	HTTP *http.Client
	// Partner is the company whose data the requests read and write (its keys); Other is a
	// second company whose keys must never reach the partner's data.
	Partner, Other Keys
	AdminToken     string
	CronSecret     string
	// MerchantIDs are merchants of Partner in the test environment; LogIDs delivery log entries
	// of Partner's test environment (may be empty).
	MerchantIDs []string
	LogIDs      []string
	// RollCompanyID is a company whose keys the admin key-roll route may roll: none of the
	// keys above belongs to it.
	RollCompanyID string
	// WebhookURL is the only webhook target valid requests configure: an address on this
	// machine (the fuzzer never points deliveries elsewhere).
	WebhookURL string
}

// Keys are a company's API keys.
type Keys struct {
	SKTest, SKLive, PKTest string
}

// pick returns one of xs at random.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
