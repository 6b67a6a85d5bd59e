package ports

// What the tests of package ports_test reach inside the package: the errors the HTTP layer
// raises and the rows of the error table.

// The errors of the HTTP layer.
var (
	ErrRouteNotFound            = errRouteNotFound
	ErrMethodNotAllowed         = errMethodNotAllowed
	ErrUnsupportedMediaType     = errUnsupportedMediaType
	ErrIdempotencyKeyReused     = errIdempotencyKeyReused
	ErrIdempotencyKeyInProgress = errIdempotencyKeyInProgress
	ErrPanic                    = errPanic
)

// RateLimited is the error of a request over its rate limit, Retry-After seconds given.
func RateLimited(retryAfter string) error { return errRateLimited{retryAfter: retryAfter} }

// ErrorTableRows is the number of rows of the error table.
func ErrorTableRows() int { return len(errorTable) }

// ErrorTableRow is the index of the row of the error table that answers err; -1 when none does
// (500 INTERNAL).
func ErrorTableRow(err error) int {
	for i, e := range errorTable {
		if e.match(err) {
			return i
		}
	}
	return -1
}
