// Package api is the merchant service's command API over NATS request-reply (a nats.go micro
// service named "merchant", queue group "merchant"): the subjects, the JSON requests and
// replies, the error codes, and a client. The gateway maps the codes to HTTP (DESIGN §5).
//
// The subjects live under "svc.merchant." rather than "merchant.", because the MERCHANTS
// JetStream stream captures "merchant.>": a request there would be stored as an event and
// answered by JetStream.
package api

import (
	"time"

	"github.com/payplat/platform/pkg/natsx"
)

// Service identity in `nats micro ls`.
const (
	ServiceName = "merchant"
	QueueGroup  = "merchant"
	// SubjectPrefix is the group of every endpoint.
	SubjectPrefix = "svc.merchant"
)

// Endpoints, relative to SubjectPrefix.
const (
	EndpointCreate         = "create"
	EndpointSetStatus      = "set_status"
	EndpointAdminSetStatus = "admin_set_status"
	EndpointGetStatus      = "get_status"
)

// Subject returns the full subject of an endpoint.
func Subject(endpoint string) string { return SubjectPrefix + "." + endpoint }

// Error codes of replies. The gateway answers them with the HTTP status in parentheses.
const (
	CodeValidation         = "VALIDATION_ERROR"            // 400
	CodeDuplicate          = "DUPLICATE_RESOURCE"          // 400
	CodeNotFound           = "NOT_FOUND"                   // 404
	CodeStatusLocked       = "MERCHANT_STATUS_LOCKED"      // 403
	CodeWalletUnavailable  = "WALLET_PROVIDER_UNAVAILABLE" // 503
	CodeInternal           = "INTERNAL"                    // 500
	CodeServiceUnavailable = natsx.CodeUnavailable         // 503: no merchant service answered
)

// HeaderRequestID carries the caller's request id, which becomes the events' correlation id.
const HeaderRequestID = "X-Request-Id"

// CreateRequest creates a merchant for a company in an environment. MerchantID is optional;
// repeating a request with the same MerchantID returns the merchant created the first time.
type CreateRequest struct {
	MerchantID  string `json:"merchant_id,omitempty"`
	CompanyID   string `json:"company_id"`
	Environment string `json:"environment"`
	Name        string `json:"name"`
	Email       string `json:"email"`
}

// SetStatusRequest changes a merchant's status. On EndpointSetStatus the company and
// environment are required and only ACTIVE and PAUSED are accepted; on EndpointAdminSetStatus
// they are ignored and any status is.
type SetStatusRequest struct {
	CompanyID   string `json:"company_id,omitempty"`
	Environment string `json:"environment,omitempty"`
	MerchantID  string `json:"merchant_id"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
}

// GetStatusRequest asks for a merchant's current status.
type GetStatusRequest struct {
	CompanyID   string `json:"company_id"`
	Environment string `json:"environment"`
	MerchantID  string `json:"merchant_id"`
}

// Merchant is a merchant as the commands return it.
type Merchant struct {
	ID            string    `json:"id"`
	CompanyID     string    `json:"company_id"`
	Environment   string    `json:"environment"`
	Name          string    `json:"name"`
	Email         string    `json:"email"`
	WalletAddress string    `json:"wallet_address"`
	WalletUserID  string    `json:"wallet_user_id"`
	Status        string    `json:"status"`
	Balance       string    `json:"balance"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// StatusReply answers EndpointGetStatus.
type StatusReply struct {
	MerchantID    string `json:"merchant_id"`
	Name          string `json:"name"`
	WalletAddress string `json:"wallet_address"`
	Status        string `json:"status"`
	Active        bool   `json:"active"`
}

// Error is an error reply: its code, a message for people, and the offending field of a
// VALIDATION_ERROR. Every service's API answers errors in this one shape.
type Error = natsx.Error
