package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// factsIntoPayments (version 3002) moves the facts of each payment from the payment_facts table
// (one row per applied event, 03001) into the payment's row, column facts (the
// payplat.payment_store.v1.PaymentFacts bytes of adapters.EncodeFacts), and drops the table:
// applying an event then reads and writes one row instead of three statements over two tables,
// and a rebuild writes one row per payment instead of one more per event, with no index on a
// million facts to build. Go, because SQL cannot write the protobuf encoding. Down moves them
// back.
func factsIntoPayments() *goose.Migration {
	return goose.NewGoMigration(3002, &goose.GoFunc{RunTx: factsUp}, &goose.GoFunc{RunTx: factsDown})
}

// batch is how many payments a statement of the migration writes, fetchRows how many facts it
// reads at a time (variables for the test, which makes a payment's facts span fetches).
var batch, fetchRows = 5_000, 10_000

func factsUp(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE payments ADD COLUMN facts bytea NOT NULL DEFAULT ''::bytea`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DECLARE old_facts NO SCROLL CURSOR FOR
        SELECT company_id, environment, payment_id, event_id, status, merchant_id, merchant_wallet, customer_wallet,
               amount_micros, tx_hash, block_explorer_url, error_message, created_at, expires_at, confirmed_at,
               expired_at, occurred_at
        FROM payment_facts ORDER BY company_id, environment, payment_id`); err != nil {
		return err
	}
	var (
		pending = map[domain.Key][]domain.Fact{}
		order   []domain.Key
	)
	flush := func(keep *domain.Key) error {
		var c, e, id []string
		var blobs [][]byte
		for _, k := range order {
			if keep != nil && k == *keep {
				continue
			}
			b, err := adapters.EncodeFacts(pending[k])
			if err != nil {
				return err
			}
			c, e, id, blobs = append(c, k.CompanyID), append(e, k.Environment), append(id, k.PaymentID), append(blobs, b)
			delete(pending, k)
		}
		order = order[:0]
		if keep != nil && pending[*keep] != nil {
			order = append(order, *keep)
		}
		if len(c) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE payments p SET facts = t.f
            FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) AS t(c, e, id, f)
            WHERE p.company_id = t.c AND p.environment = t.e AND p.payment_id = t.id`, c, e, id, blobs)
		return err
	}
	for {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(`FETCH %d FROM old_facts`, fetchRows))
		if err != nil {
			return err
		}
		n := 0
		var last domain.Key
		for rows.Next() {
			var (
				f                                    domain.Fact
				created, expires, confirmed, expired sql.Null[time.Time]
			)
			if err := rows.Scan(&f.CompanyID, &f.Environment, &f.PaymentID, &f.EventID, &f.Status, &f.MerchantID,
				&f.MerchantWallet, &f.CustomerWallet, &f.AmountMicros, &f.TxHash, &f.BlockExplorerURL, &f.ErrorMessage,
				&created, &expires, &confirmed, &expired, &f.OccurredAt); err != nil {
				rows.Close()
				return err
			}
			f.CreatedAt, f.ExpiresAt, f.ConfirmedAt, f.ExpiredAt = timePtr(created), timePtr(expires), timePtr(confirmed), timePtr(expired)
			if pending[f.Key] == nil {
				order = append(order, f.Key)
			}
			pending[f.Key] = append(pending[f.Key], f)
			last = f.Key
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if n == 0 {
			if err := flush(nil); err != nil {
				return err
			}
			break
		}
		// The last payment read may have more facts in the next fetch: it waits for them.
		if len(order) >= batch {
			if err := flush(&last); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `CLOSE old_facts`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DROP TABLE payment_facts`)
	return err
}

func timePtr(t sql.Null[time.Time]) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.V.UTC()
	return &v
}

// factsTable is the CREATE TABLE payment_facts statement of 03001, read from that file, so that
// Down re-creates the table exactly as the migration that first made it.
func factsTable() (string, error) {
	b, err := files.ReadFile("03001_payments.sql")
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.Index(s, "CREATE TABLE payment_facts (")
	if i < 0 {
		return "", errors.New("03001_payments.sql: no CREATE TABLE payment_facts")
	}
	n := strings.Index(s[i:], ");")
	if n < 0 {
		return "", errors.New("03001_payments.sql: CREATE TABLE payment_facts does not end")
	}
	return s[i : i+n+2], nil
}

func factsDown(ctx context.Context, tx *sql.Tx) error {
	create, err := factsTable()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DECLARE stored NO SCROLL CURSOR FOR
        SELECT company_id, environment, payment_id, facts FROM payments`); err != nil {
		return err
	}
	for {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(`FETCH %d FROM stored`, batch))
		if err != nil {
			return err
		}
		var facts []domain.Fact
		for rows.Next() {
			var (
				k    domain.Key
				blob []byte
			)
			if err := rows.Scan(&k.CompanyID, &k.Environment, &k.PaymentID, &blob); err != nil {
				rows.Close()
				return err
			}
			fs, err := adapters.DecodeFacts(k, blob)
			if err != nil {
				rows.Close()
				return err
			}
			facts = append(facts, fs...)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if len(facts) == 0 {
			break
		}
		if err := insertOldFacts(ctx, tx, facts); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CLOSE stored`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `ALTER TABLE payments DROP COLUMN facts`)
	return err
}

func insertOldFacts(ctx context.Context, tx *sql.Tx, facts []domain.Fact) error {
	n := len(facts)
	c, e, id, ev, status, merchant, mWallet, cWallet := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	txHash, url, errMsg := make([]string, n), make([]string, n), make([]string, n)
	rank, amount := make([]int16, n), make([]int64, n)
	created, expires, confirmed, expired := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	occurred := make([]time.Time, n)
	for i, f := range facts {
		c[i], e[i], id[i], ev[i], status[i] = f.CompanyID, f.Environment, f.PaymentID, f.EventID.String(), f.Status
		merchant[i], mWallet[i], cWallet[i], txHash[i], url[i], errMsg[i] = f.MerchantID, f.MerchantWallet, f.CustomerWallet, f.TxHash, f.BlockExplorerURL, f.ErrorMessage
		rank[i], amount[i] = int16(domain.Rank(f.Status)), f.AmountMicros
		created[i], expires[i], confirmed[i], expired[i], occurred[i] = f.CreatedAt, f.ExpiresAt, f.ConfirmedAt, f.ExpiredAt, f.OccurredAt
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO payment_facts (company_id, environment, payment_id, event_id, rank, status,
            merchant_id, merchant_wallet, customer_wallet, amount_micros, tx_hash, block_explorer_url, error_message,
            created_at, expires_at, confirmed_at, expired_at, occurred_at)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::smallint[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::timestamptz[],
            $15::timestamptz[], $16::timestamptz[], $17::timestamptz[], $18::timestamptz[])`,
		c, e, id, ev, rank, status, merchant, mWallet, cWallet, amount, txHash, url, errMsg,
		created, expires, confirmed, expired, occurred)
	if err != nil {
		return fmt.Errorf("moving facts back to payment_facts: %w", err)
	}
	return nil
}
