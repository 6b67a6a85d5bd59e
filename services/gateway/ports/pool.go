package ports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// PoolService is what the pool routes need: the pool service's read tables and its commands.
type PoolService interface {
	Balance(ctx context.Context, company uuid.UUID, env domain.Environment) (domain.PoolBalance, error)
	Transactions(ctx context.Context, company uuid.UUID, env domain.Environment,
		f domain.PoolTransactionFilter) (domain.PoolTransactionPage, error)
	UpdateSettings(ctx context.Context, company uuid.UUID, env domain.Environment, u domain.PoolSettingsUpdate,
		requestID string) (domain.PoolBalance, error)
	// SimulateDeposit records a deposit; the pool records one per non-empty commandID.
	SimulateDeposit(ctx context.Context, company uuid.UUID, env domain.Environment, amount, commandID,
		requestID string) (domain.PoolDeposit, error)
}

// Page size bounds of the pool transactions list (SPEC §4.6, §8).
const (
	poolDefaultLimit = 50
	poolMaxLimit     = 100
)

// poolRoutes registers the pool endpoints (SPEC §4.5, §4.6, DESIGN §5). The principal's key
// fixes company and environment: nothing of another pool is reachable.
func (s *Server) poolRoutes() {
	if s.pool == nil {
		return
	}
	secret := RequireKey(domain.Secret)
	secretOrPublishable := RequireKey(domain.Secret, domain.Publishable)
	for _, prefix := range []string{"/api/v1/management/pool", "/api/v1/dashboard/pool"} {
		s.HandleFunc(http.MethodGet, prefix+"/balance", s.poolBalance, secret)
		s.HandleFunc(http.MethodGet, prefix+"/transactions", s.poolTransactions, secretOrPublishable,
			"type", "limit", "offset")
	}
	s.HandleFunc(http.MethodPatch, "/api/v1/dashboard/pool/settings", s.updatePoolSettings, secret)
	s.HandleFunc(http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", s.simulatePoolDeposit, secret)
}

// poolBalance serves GET /pool/balance: SPEC §2.5.
func (s *Server) poolBalance(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	b, err := s.pool.Balance(r.Context(), p.CompanyID, p.Environment)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

type poolPagination struct {
	Total   int64 `json:"total"`
	Limit   int   `json:"limit"`
	Offset  int64 `json:"offset"`
	HasMore bool  `json:"has_more"`
}

type poolTransactionsResponse struct {
	Transactions []domain.PoolTransaction `json:"transactions"`
	Pagination   poolPagination           `json:"pagination"`
}

// poolTransactions serves GET /pool/transactions: SPEC §4.6, newest first.
func (s *Server) poolTransactions(w http.ResponseWriter, r *http.Request) {
	f, err := parsePoolFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, _ := PrincipalFrom(r.Context())
	page, err := s.pool.Transactions(r.Context(), p.CompanyID, p.Environment, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, poolTransactionsResponse{
		Transactions: page.Transactions,
		Pagination: poolPagination{Total: page.Total, Limit: f.Limit, Offset: f.Offset,
			HasMore: f.Offset+int64(len(page.Transactions)) < page.Total},
	})
}

// parsePoolFilter reads type, limit (1 to 100, default 50) and offset (0 or more, default 0); the
// route takes no other parameter (strictQuery).
func parsePoolFilter(r *http.Request) (domain.PoolTransactionFilter, error) {
	q := r.URL.Query()
	f := domain.PoolTransactionFilter{Limit: poolDefaultLimit}
	if q.Has("type") {
		f.Type = q.Get("type")
		if !slices.Contains(domain.PoolTransactionTypes, f.Type) {
			return f, domain.Invalid("type", "must be one of DEPOSIT, DEBIT, CREDIT, WITHDRAWAL")
		}
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > poolMaxLimit {
			return f, domain.Invalid("limit", "must be a whole number from 1 to 100")
		}
		f.Limit = n
	}
	if q.Has("offset") {
		n, err := strconv.ParseInt(q.Get("offset"), 10, 64)
		if err != nil || n < 0 {
			return f, domain.Invalid("offset", "must be a whole number, 0 or more")
		}
		f.Offset = n
	}
	return f, nil
}

type poolSettingsBody struct {
	LowThreshold     *string `json:"low_threshold"`
	AutoTopUpEnabled *bool   `json:"auto_top_up_enabled"`
}

// updatePoolSettings serves PATCH /api/v1/dashboard/pool/settings: the fields given change, the
// answer is the pool balance of SPEC §2.5 with the new settings.
func (s *Server) updatePoolSettings(w http.ResponseWriter, r *http.Request) {
	var body poolSettingsBody
	if err := decodeJSON(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	b, err := UpdatePoolSettings(r.Context(), s.pool, body.LowThreshold, body.AutoTopUpEnabled)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

type poolDepositBody struct {
	Amount *string `json:"amount"`
}

// simulatePoolDeposit serves POST /api/v1/dashboard/pool/simulate-deposit (test keys only): a
// DEPOSIT recorded and published like a real one. It creates a pool transaction, so it
// answers 201 (DESIGN §5) with {transaction, balance}.
func (s *Server) simulatePoolDeposit(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if p.Environment != domain.Test {
		s.writeError(w, r, domain.ErrPoolTestModeOnly)
		return
	}
	var body poolDepositBody
	if err := decodeJSON(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := SimulatePoolDeposit(r.Context(), s.pool, body.Amount, r.Header.Get("Idempotency-Key"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, d)
}

// commandIDFor identifies a command for the pool service's own de-duplication: from the
// Idempotency-Key when there is one (a retry after a lost reply records nothing new, even when
// the first attempt's outcome was never stored), else nothing: every call is a new command. Never
// the request id: X-Request-Id is the caller's correlation id, which any caller may repeat, and a
// repeat must not silently answer with an earlier deposit (issue 16).
func commandIDFor(ctx context.Context, idempotencyKey string) string {
	if idempotencyKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(callerScope(ctx) + "\x00" + idempotencyKey))
	return "idem-" + hex.EncodeToString(sum[:16])
}
