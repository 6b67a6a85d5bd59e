package ports

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/domain"
)

// Ledger page sizes (SPEC §4.3).
const (
	defaultMerchantLedgerLimit = 50
	maxMerchantLedgerLimit     = 100
)

// merchantRoutes registers the merchant endpoints (SPEC §4.1–4.4, DESIGN §5).
func (s *Server) merchantRoutes() {
	secret := RequireKey(domain.Secret)
	s.HandleFunc(http.MethodGet, "/api/v1/management/merchants", s.listMerchants, secret)
	s.HandleFunc(http.MethodPost, "/api/v1/management/merchants/create", s.createMerchant, secret)
	s.HandleFunc(http.MethodGet, "/api/v1/management/merchants/{id}/transactions", s.merchantLedger, secret, "limit")
	s.HandleFunc(http.MethodPatch, "/api/v1/management/merchants/{id}/status", s.setMerchantStatus, secret)
	s.HandleFunc(http.MethodPatch, "/api/v1/dashboard/merchants/{id}/status", s.setMerchantStatus, secret)
	s.HandleFunc(http.MethodPatch, "/api/v1/admin/merchants/{id}/status", s.adminSetMerchantStatus, AdminToken)
}

type merchantJSON struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Email         string `json:"email"`
	WalletAddress string `json:"wallet_address"`
	Balance       string `json:"balance"`
	CreatedAt     string `json:"created_at"`
}

func newMerchantJSON(m domain.MerchantSummary) merchantJSON {
	return merchantJSON{ID: m.ID, Name: m.Name, Email: m.Email, WalletAddress: m.WalletAddress, Balance: m.Balance,
		CreatedAt: merchantTime(m.CreatedAt)}
}

// merchantTime renders an ISO 8601 time in UTC with millisecond precision.
func merchantTime(t time.Time) string { return events.FormatTime(t) }

// listMerchants serves GET /api/v1/management/merchants: the company's merchants in the key's
// environment, newest first, with their balances.
func (s *Server) listMerchants(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	list, err := s.app.Queries.ListMerchants.Handle(r.Context(), query.ListMerchants{Principal: p})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Merchants []merchantJSON `json:"merchants"`
	}{jsonList(list, newMerchantJSON)})
	return nil
}

type merchantCreateRequest struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

type merchantCreatedJSON struct {
	merchantJSON
	WalletUserID string `json:"wallet_user_id"`
	Environment  string `json:"environment"`
}

// createMerchant serves POST /api/v1/management/merchants/create: name and email are required
// members; under an Idempotency-Key a retry is the same merchant (command.CreateMerchantHandler).
func (s *Server) createMerchant(w http.ResponseWriter, r *http.Request) error {
	var req merchantCreateRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return validation.Invalid("name", "is required")
	}
	if req.Email == nil {
		return validation.Invalid("email", "is required")
	}
	m, err := s.app.Commands.CreateMerchant.Handle(r.Context(),
		createMerchantCommand(r.Context(), *req.Name, *req.Email, r.Header.Get("Idempotency-Key")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		Merchant merchantCreatedJSON `json:"merchant"`
	}{merchantCreatedJSON{merchantJSON: newMerchantJSON(m.MerchantSummary), WalletUserID: m.WalletUserID,
		Environment: m.Environment}})
	return nil
}

// createMerchantCommand is the creation of a merchant by the caller in ctx.
func createMerchantCommand(ctx context.Context, name, email, idempotencyKey string) command.CreateMerchant {
	p, _ := PrincipalFrom(ctx)
	return command.CreateMerchant{Principal: p, RequestID: requestID(ctx), Name: name, Email: email,
		Caller: callerScope(ctx), IdempotencyKey: idempotencyKey}
}

type merchantLedgerEntryJSON struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	Amount        string  `json:"amount"`
	BalanceBefore string  `json:"balance_before"`
	BalanceAfter  string  `json:"balance_after"`
	PaymentID     *string `json:"payment_id"`
	Status        string  `json:"status"`
	Description   string  `json:"description"`
	CreatedAt     string  `json:"created_at"`
}

// merchantLedger serves GET /api/v1/management/merchants/{id}/transactions: the merchant's
// ledger, newest first, at most limit entries (default 50, 1 to 100).
func (s *Server) merchantLedger(w http.ResponseWriter, r *http.Request) error {
	limit, err := merchantLedgerLimit(r)
	if err != nil {
		return err
	}
	p, _ := PrincipalFrom(r.Context())
	l, err := s.app.Queries.MerchantLedger.Handle(r.Context(), query.MerchantLedger{Principal: p,
		MerchantID: mux.Vars(r)["id"], Limit: limit})
	if err != nil {
		return err
	}
	entries := make([]merchantLedgerEntryJSON, len(l.Entries))
	for i, e := range l.Entries {
		entries[i] = merchantLedgerEntryJSON{ID: e.ID, Type: e.Type, Amount: e.Amount, BalanceBefore: e.BalanceBefore,
			BalanceAfter: e.BalanceAfter, Status: e.Status, Description: e.Description, CreatedAt: merchantTime(e.CreatedAt)}
		if e.PaymentID != "" {
			entries[i].PaymentID = &l.Entries[i].PaymentID
		}
	}
	writeJSON(w, http.StatusOK, struct {
		MerchantID   string                    `json:"merchant_id"`
		MerchantName string                    `json:"merchant_name"`
		TotalCount   int                       `json:"total_count"`
		Transactions []merchantLedgerEntryJSON `json:"transactions"`
	}{l.MerchantID, l.MerchantName, l.TotalCount, entries})
	return nil
}

// merchantLedgerLimit reads limit (1 to 100, default 50); the route takes no other parameter
// (strictQuery).
func merchantLedgerLimit(r *http.Request) (int, error) {
	return pageLimit(r.URL.Query(), defaultMerchantLedgerLimit, maxMerchantLedgerLimit)
}

type merchantStatusRequest struct {
	Status *string `json:"status"`
	Reason string  `json:"reason"`
}

type merchantStatusResultJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updated_at"`
}

// setMerchantStatus serves PATCH /api/v1/{management,dashboard}/merchants/{id}/status: the
// company sets ACTIVE or PAUSED (403 MERCHANT_STATUS_LOCKED from a platform status).
func (s *Server) setMerchantStatus(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	return s.changeMerchantStatus(w, r, &p)
}

// adminSetMerchantStatus serves PATCH /api/v1/admin/merchants/{id}/status: any status.
func (s *Server) adminSetMerchantStatus(w http.ResponseWriter, r *http.Request) error {
	return s.changeMerchantStatus(w, r, nil)
}

func (s *Server) changeMerchantStatus(w http.ResponseWriter, r *http.Request, p *domain.Principal) error {
	var req merchantStatusRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	res, err := changeStatus(r.Context(), s.app.Commands.SetMerchantStatus, s.app.Commands.AdminSetMerchantStatus, p,
		mux.Vars(r)["id"], req.Status, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, merchantStatusResultJSON{ID: res.ID, Name: res.Name, Status: res.Status,
		UpdatedAt: merchantTime(res.UpdatedAt)})
	return nil
}

// changeStatus changes a merchant's status for the company of p with partner, or for the
// platform with admin when p is nil.
func changeStatus(ctx context.Context, partner command.SetMerchantStatusHandler,
	admin command.AdminSetMerchantStatusHandler, p *domain.Principal, merchantID string, status *string,
	reason string) (domain.MerchantStatusResult, error) {
	if p == nil {
		return admin.Handle(ctx, command.AdminSetMerchantStatus{RequestID: requestID(ctx), MerchantID: merchantID,
			Status: valueOf(status), Reason: reason})
	}
	return partner.Handle(ctx, command.SetMerchantStatus{Principal: *p, RequestID: requestID(ctx),
		MerchantID: merchantID, Status: valueOf(status), Reason: reason})
}

// valueOf is *v, or "" when v is nil.
func valueOf(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}
