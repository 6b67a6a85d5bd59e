package domain

// StoredResponse is the first response to a request made with an Idempotency-Key, kept so that
// a repeat of the request gets the same answer.
type StoredResponse struct {
	Status int
	Header map[string]string
	Body   []byte
}

// IdempotencyRecord is what is known of an Idempotency-Key already used by the caller.
type IdempotencyRecord struct {
	// Fingerprint identifies the request (method, path and body) that first used the key.
	Fingerprint []byte
	// Response is nil while that first request is still in flight.
	Response *StoredResponse
}
