// Package app holds the gateway's use cases: commands change state, queries read it.
package app

import (
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
)

// Application is the set of use cases the ports call.
type Application struct {
	Commands Commands
	Queries  Queries
}

// Commands are the use cases that change state.
type Commands struct {
	CreateCompany command.CreateCompanyHandler
	RollAPIKey    command.RollAPIKeyHandler

	CreateMerchant         command.CreateMerchantHandler
	SetMerchantStatus      command.SetMerchantStatusHandler
	AdminSetMerchantStatus command.AdminSetMerchantStatusHandler

	UpdatePoolSettings  command.UpdatePoolSettingsHandler
	SimulatePoolDeposit command.SimulatePoolDepositHandler

	ProcessPayment  command.ProcessPaymentHandler
	SimulatePayment command.SimulatePaymentHandler

	ConfigureWebhooks command.ConfigureWebhooksHandler
	RetryWebhook      command.RetryWebhookHandler
	RunWebhookCron    command.RunWebhookCronHandler
}

// Queries are the read-only use cases.
type Queries struct {
	ListCompanies query.ListCompaniesHandler
	Authenticate  query.AuthenticateHandler

	ListMerchants  query.ListMerchantsHandler
	MerchantLedger query.MerchantLedgerHandler

	PoolBalance      query.PoolBalanceHandler
	PoolTransactions query.PoolTransactionsHandler

	ListPayments query.ListPaymentsHandler

	WebhookLogs query.WebhookLogsHandler
}
