package ports

import (
	"context"
	"net/http"
	"slices"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/domain"
)

// Page size bounds of the pool transactions list (SPEC §4.6, §8).
const (
	poolDefaultLimit = 50
	poolMaxLimit     = 100
)

// poolRoutes registers the pool endpoints (SPEC §4.5, §4.6, DESIGN §5). The principal's key
// fixes company and environment: nothing of another pool is reachable.
func (s *Server) poolRoutes() {
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
func (s *Server) poolBalance(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	b, err := s.app.Queries.PoolBalance.Handle(r.Context(), query.PoolBalance{Principal: p})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
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
func (s *Server) poolTransactions(w http.ResponseWriter, r *http.Request) error {
	f, err := parsePoolFilter(r)
	if err != nil {
		return err
	}
	p, _ := PrincipalFrom(r.Context())
	page, err := s.app.Queries.PoolTransactions.Handle(r.Context(), query.PoolTransactions{Principal: p, Filter: f})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, poolTransactionsResponse{
		Transactions: page.Transactions,
		Pagination: poolPagination{Total: page.Total, Limit: f.Limit, Offset: f.Offset,
			HasMore: f.Offset+int64(len(page.Transactions)) < page.Total},
	})
	return nil
}

// parsePoolFilter reads type, limit (1 to 100, default 50) and offset (0 or more, default 0); the
// route takes no other parameter (strictQuery).
func parsePoolFilter(r *http.Request) (domain.PoolTransactionFilter, error) {
	q := r.URL.Query()
	f := domain.PoolTransactionFilter{Limit: poolDefaultLimit}
	if q.Has("type") {
		f.Type = q.Get("type")
		if !slices.Contains(domain.PoolTransactionTypes, f.Type) {
			return f, validation.Invalid("type", "must be one of DEPOSIT, DEBIT, CREDIT, WITHDRAWAL")
		}
	}
	var err error
	if f.Limit, err = pageLimit(q, poolDefaultLimit, poolMaxLimit); err != nil {
		return f, err
	}
	offset, err := pageOffset(q)
	f.Offset = int64(offset)
	if err != nil {
		return f, err
	}
	return f, nil
}

type poolSettingsBody struct {
	LowThreshold     *string `json:"low_threshold"`
	AutoTopUpEnabled *bool   `json:"auto_top_up_enabled"`
}

// updatePoolSettings serves PATCH /api/v1/dashboard/pool/settings: the fields given change, the
// answer is the pool balance of SPEC §2.5 with the new settings.
func (s *Server) updatePoolSettings(w http.ResponseWriter, r *http.Request) error {
	var body poolSettingsBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	b, err := s.app.Commands.UpdatePoolSettings.Handle(r.Context(),
		updatePoolSettingsCommand(r.Context(), body.LowThreshold, body.AutoTopUpEnabled))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

type poolDepositBody struct {
	Amount *string `json:"amount"`
}

// simulatePoolDeposit serves POST /api/v1/dashboard/pool/simulate-deposit (test keys only): a
// DEPOSIT recorded and published like a real one. It creates a pool transaction, so it
// answers 201 (DESIGN §5) with {transaction, balance}.
func (s *Server) simulatePoolDeposit(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	if err := s.app.Commands.SimulatePoolDeposit.Permit(p); err != nil {
		return err
	}
	var body poolDepositBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	d, err := s.app.Commands.SimulatePoolDeposit.Handle(r.Context(),
		simulatePoolDepositCommand(r.Context(), body.Amount, r.Header.Get("Idempotency-Key")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

// updatePoolSettingsCommand is the caller's change of its pool settings (nil ones unchanged).
func updatePoolSettingsCommand(ctx context.Context, lowThreshold *string, autoTopUp *bool) command.UpdatePoolSettings {
	p, _ := PrincipalFrom(ctx)
	return command.UpdatePoolSettings{Principal: p, RequestID: requestID(ctx), LowThreshold: lowThreshold,
		AutoTopUp: autoTopUp}
}

// simulatePoolDepositCommand is the caller's simulated deposit, de-duplicated on its
// Idempotency-Key when it sent one.
func simulatePoolDepositCommand(ctx context.Context, amount *string, idempotencyKey string) command.SimulatePoolDeposit {
	p, _ := PrincipalFrom(ctx)
	return command.SimulatePoolDeposit{Principal: p, RequestID: requestID(ctx), Amount: amount,
		Caller: callerScope(ctx), IdempotencyKey: idempotencyKey}
}
