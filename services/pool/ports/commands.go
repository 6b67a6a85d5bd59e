package ports

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/domain"
)

// CommandTimeout bounds one command, below the client's wait for the reply (api.Timeout) so that
// the caller gets the pool's answer rather than a timeout of its own.
const CommandTimeout = 8 * time.Second

// Commands serves the pool's commands.
type Commands struct {
	repo *adapters.Repository
	log  *slog.Logger
	nc   *nats.Conn
	svc  micro.Service
	// inflight is read-locked by each command being handled; Stop write-locks it to wait for
	// them to finish.
	inflight sync.RWMutex
}

// StartCommands registers the micro service api.ServiceName with its endpoints on nc; stop it
// with Stop (closing nc stops it too).
func StartCommands(ctx context.Context, nc *nats.Conn, repo *adapters.Repository, log *slog.Logger) (*Commands, error) {
	c := &Commands{repo: repo, log: log, nc: nc}
	svc, err := micro.AddService(nc, micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup,
		Description: "treasury pool commands"})
	if err != nil {
		return nil, fmt.Errorf("adding micro service: %w", err)
	}
	c.svc = svc
	// A command runs to its end even when the service is stopping: its context is not the
	// service's, which a SIGTERM cancels (a rolling restart would fail the commands in flight
	// with 500), but one bounded by CommandTimeout; Stop waits for it.
	ctx = context.WithoutCancel(ctx)
	if err := svc.AddEndpoint(api.EndpointUpdateSettings, micro.ContextHandler(ctx, c.bounded(c.updateSettings)),
		micro.WithEndpointSubject(api.SubjectUpdateSettings)); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	if err := svc.AddEndpoint(api.EndpointSimulateDeposit, micro.ContextHandler(ctx, c.bounded(c.simulateDeposit)),
		micro.WithEndpointSubject(api.SubjectSimulateDeposit)); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops taking commands, lets those in flight finish (each within CommandTimeout) and
// flushes their replies.
func (c *Commands) Stop() error {
	err := c.svc.Stop()
	c.inflight.Lock()
	defer c.inflight.Unlock()
	return errors.Join(err, c.nc.Flush())
}

// bounded gives each command CommandTimeout and counts it in flight.
func (c *Commands) bounded(h func(context.Context, micro.Request)) func(context.Context, micro.Request) {
	return func(ctx context.Context, req micro.Request) {
		c.inflight.RLock()
		defer c.inflight.RUnlock()
		ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
		h(ctx, req)
	}
}

func (c *Commands) updateSettings(ctx context.Context, req micro.Request) {
	var in api.UpdateSettingsRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		c.fail(req, invalid("", "request is not valid JSON"))
		return
	}
	id, err := domain.NewID(in.CompanyID, in.Environment)
	if err != nil {
		c.fail(req, invalid("", err.Error()))
		return
	}
	var threshold *money.Amount
	if in.LowThreshold != nil {
		a, err := money.Parse(*in.LowThreshold)
		if err != nil {
			c.fail(req, invalid("low_threshold", "must be a non-negative USDC amount with at most 6 decimals, e.g. \"100.00\""))
			return
		}
		threshold = &a
	}
	var view api.Balance
	err = pgx.BeginFunc(ctx, c.repo.DB(), func(tx pgx.Tx) error {
		if err := c.repo.LockPools(ctx, tx, id); err != nil {
			return err
		}
		err := c.repo.UpdateTx(ctx, tx, id, func(p *domain.Pool) error {
			s := p.Settings()
			if threshold != nil {
				s.LowThreshold = *threshold
			}
			if in.AutoTopUpEnabled != nil {
				s.AutoTopUpEnabled = *in.AutoTopUpEnabled
			}
			_, err := p.ChangeSettings(s, time.Now().UTC(), domain.Cause{CorrelationID: in.RequestID})
			return err
		})
		if err != nil {
			return err
		}
		view, err = adapters.Balance(ctx, tx, id)
		return err
	})
	if err != nil {
		c.fail(req, err)
		return
	}
	c.respond(req, view)
}

func (c *Commands) simulateDeposit(ctx context.Context, req micro.Request) {
	var in api.SimulateDepositRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		c.fail(req, invalid("", "request is not valid JSON"))
		return
	}
	id, err := domain.NewID(in.CompanyID, in.Environment)
	if err != nil {
		c.fail(req, invalid("", err.Error()))
		return
	}
	if id.Environment != "test" {
		c.fail(req, domain.ErrTestModeOnly)
		return
	}
	amount, err := money.Parse(in.Amount)
	if err != nil || !amount.IsPositive() {
		c.fail(req, invalid("amount", "must be a USDC amount greater than zero with at most 6 decimals, e.g. \"100.00\""))
		return
	}
	txHash := simulatedTxHash(id, in.RequestID)
	now := time.Now().UTC()
	correlation := in.CorrelationID
	if correlation == "" {
		correlation = in.RequestID
	}
	f := domain.Fact{Type: domain.Deposit, Key: domain.DepositKey(txHash), Amount: amount, TxHash: txHash,
		Description: "Simulated deposit (test mode)", ConfirmedAt: now,
		Cause: domain.Cause{CorrelationID: correlation}}
	var out api.SimulateDepositReply
	err = pgx.BeginFunc(ctx, c.repo.DB(), func(tx pgx.Tx) error {
		if err := c.repo.LockPools(ctx, tx, id); err != nil {
			return err
		}
		rec, err := c.repo.RecordFacts(ctx, tx, id, []domain.Fact{f})
		if err != nil {
			return err
		}
		movementID := rec.Duplicates[f.Key]
		if len(rec.Movements) == 1 {
			movementID = rec.Movements[0].ID
		}
		t, err := adapters.Transaction(ctx, tx, id, movementID)
		if err != nil {
			return err
		}
		out.Transaction = t.Transaction
		out.Balance, err = adapters.Balance(ctx, tx, id)
		return err
	})
	if err != nil {
		c.fail(req, err)
		return
	}
	c.respond(req, out)
}

// simulatedTxHash is the tx hash of a simulated deposit, a well-formed 32-byte hash like a real
// one: derived from the request id when there is one (a repeated request is the same deposit),
// random otherwise.
func simulatedTxHash(id domain.ID, requestID string) string {
	sum := make([]byte, 32)
	if requestID == "" {
		_, _ = rand.Read(sum)
	} else {
		h := sha256.Sum256([]byte(id.StreamID() + "\x00" + requestID))
		sum = h[:]
	}
	return "0x" + hex.EncodeToString(sum)
}

type validationError struct {
	field, message string
}

func (e *validationError) Error() string { return e.message }

func invalid(field, message string) error { return &validationError{field: field, message: message} }

func (c *Commands) respond(req micro.Request, v any) {
	if err := req.RespondJSON(v); err != nil {
		c.log.Error("responding to command", "subject", req.Subject(), "err", err)
	}
}

// fail answers with the typed error body; the micro error code is the HTTP status to use.
func (c *Commands) fail(req micro.Request, err error) {
	var (
		ve     *validationError
		status string
		body   api.Error
	)
	switch {
	case errors.As(err, &ve):
		status, body = "400", api.Error{Code: api.CodeValidation, Message: ve.message, Field: ve.field}
	case errors.Is(err, domain.ErrInvalidAmount), errors.Is(err, domain.ErrAmountOutOfRange):
		status, body = "400", api.Error{Code: api.CodeValidation, Message: err.Error()}
	case errors.Is(err, domain.ErrTestModeOnly):
		status, body = "403", api.Error{Code: api.CodeTestModeOnly, Message: "only available with test keys"}
	case errors.Is(err, context.DeadlineExceeded) || pg.Unavailable(err):
		c.log.Warn("pool command did not finish", "subject", req.Subject(), "timeout", CommandTimeout, "err", err)
		status, body = "503", api.Error{Code: api.CodeUnavailable, Message: "the pool did not answer in time; retry"}
	default:
		c.log.Error("pool command failed", "subject", req.Subject(), "err", err)
		status, body = "500", api.Error{Code: api.CodeInternal, Message: "internal error"}
	}
	data, _ := json.Marshal(body)
	if err := req.Error(status, body.Message, data); err != nil {
		c.log.Error("responding to command", "subject", req.Subject(), "err", err)
	}
}
