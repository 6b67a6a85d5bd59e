package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Ownership says which role owns a schema and which other roles may read it.
type Ownership struct {
	Schema string
	// Owner is the role the schema's service logs in as; it owns the schema and every object
	// in it, so its migrations create, alter and drop them.
	Owner string
	// Readers are the roles of the other services that read the schema: they get USAGE on it
	// and SELECT on its tables and views (present and future), nothing else.
	Readers []string
}

// Roles is the platform's least-privilege layout: each service logs in as its
// own role and owns its schema; a service reads another's schema only where the code does.
//
//   - the gateway reads every other schema (its queries: merchants and ledgers, pool balances
//     and movements, payments, the webhook log); its one row lock in another schema, on the
//     merchant of a payment, goes through merchant.lock_merchant_for_payment, a function the
//     merchant role owns, so the gateway needs no UPDATE right anywhere but in its own schema;
//   - the pool reads gateway.companies (its unknown-company guard) and merchant.merchants;
//   - merchant, payment-projection and webhook-dispatcher read nothing of the others.
var Roles = []Ownership{
	{Schema: "gateway", Owner: "payplat_gateway", Readers: []string{"payplat_pool"}},
	{Schema: "merchant", Owner: "payplat_merchant", Readers: []string{"payplat_gateway", "payplat_pool"}},
	{Schema: "pool", Owner: "payplat_pool", Readers: []string{"payplat_gateway"}},
	{Schema: "payments", Owner: "payplat_payments", Readers: []string{"payplat_gateway"}},
	{Schema: "webhooks", Owner: "payplat_webhooks", Readers: []string{"payplat_gateway"}},
}

// RoleOf returns the role that owns schema in Roles, or "".
func RoleOf(schema string) string {
	for _, o := range Roles {
		if o.Schema == schema {
			return o.Owner
		}
	}
	return ""
}

// WithUser returns dsn (a postgres:// URL or key=value settings) logging in as user instead,
// without a password: the dev stack and the tests, whose server trusts local connections, give
// each service its own role this way. A deployment gives each service a URL of its own, with
// the role's password.
func WithUser(dsn, user string) (string, error) {
	if !ValidSchema(user) {
		return "", fmt.Errorf("invalid role name %q", user)
	}
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		// Key=value settings: a later setting wins.
		return dsn + " user=" + user + " password=''", nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("invalid database url")
	}
	u.User = url.User(user)
	q := u.Query()
	q.Del("user")
	q.Del("password")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Bootstrap lays out Roles in the database db is connected to: it creates each role that does
// not exist yet (LOGIN, no password: a deployment creates them first, with their passwords,
// and Bootstrap leaves them as they are), lets each connect and create schemas (its shadow
// schemas for projection rebuilds), creates each schema owned by its role, hands every object
// already in a schema to that role (a database laid out before roles existed), grants the
// readers USAGE and SELECT on what is there and, by default privileges, on every table the
// owner creates later, and makes the connected role and the database's owner members of every
// service role, so operator tools (replay, verify, rebuild) act on any schema. It is
// idempotent; the connected role must be a superuser or have CREATEROLE and own the database.
func Bootstrap(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}) error {
	var err error
	// Two databases of one server bootstrapped at once (parallel tests) race on the shared role
	// catalogue; every statement is idempotent, so the loser runs them again.
	for attempt := 0; attempt < 5; attempt++ {
		if err = bootstrapOnce(ctx, db); err == nil || !concurrentCatalogUpdate(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return err
}

func bootstrapOnce(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}) error {
	for _, o := range Roles {
		for _, name := range append([]string{o.Schema, o.Owner}, o.Readers...) {
			if !ValidSchema(name) {
				return fmt.Errorf("invalid name %q in the role layout", name)
			}
		}
		if _, err := db.Exec(ctx, `DO $$ BEGIN
				IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '`+o.Owner+`') THEN
					CREATE ROLE `+o.Owner+` LOGIN;
				END IF;
			END $$`); err != nil {
			return fmt.Errorf("creating role %s: %w", o.Owner, err)
		}
	}
	for _, o := range Roles {
		owner := pgx.Identifier{o.Owner}.Sanitize()
		schema := pgx.Identifier{o.Schema}.Sanitize()
		stmts := []string{
			`DO $$ BEGIN EXECUTE format('GRANT CONNECT, CREATE, TEMPORARY ON DATABASE %I TO ` + o.Owner + `', current_database()); END $$`,
			// The operator's role and the database's owner act as any service's (replays and
			// rebuilds write their tables).
			`DO $$
			DECLARE r name;
			BEGIN
				FOREACH r IN ARRAY ARRAY[current_user,
					(SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database())]
				LOOP
					IF NOT pg_has_role(r, '` + o.Owner + `', 'MEMBER') THEN
						EXECUTE format('GRANT ` + o.Owner + ` TO %I', r);
					END IF;
				END LOOP;
			END $$`,
			`CREATE SCHEMA IF NOT EXISTS ` + schema + ` AUTHORIZATION ` + owner,
			`ALTER SCHEMA ` + schema + ` OWNER TO ` + owner,
			handOver(o),
			`REVOKE ALL ON SCHEMA ` + schema + ` FROM PUBLIC`,
		}
		for _, r := range o.Readers {
			reader := pgx.Identifier{r}.Sanitize()
			stmts = append(stmts,
				`GRANT USAGE ON SCHEMA `+schema+` TO `+reader,
				`GRANT SELECT ON ALL TABLES IN SCHEMA `+schema+` TO `+reader,
				`ALTER DEFAULT PRIVILEGES FOR ROLE `+owner+` IN SCHEMA `+schema+` GRANT SELECT ON TABLES TO `+reader,
			)
		}
		for _, s := range stmts {
			if _, err := db.Exec(ctx, s); err != nil {
				return fmt.Errorf("laying out schema %s: %w", o.Schema, err)
			}
		}
	}
	return nil
}

// handOver returns a statement giving o.Owner every table, view, sequence, function and type
// in o.Schema it does not own yet (a sequence owned by a column follows its table).
func handOver(o Ownership) string {
	return `DO $$
	DECLARE r record;
	BEGIN
		FOR r IN SELECT c.oid::regclass::text AS name,
				CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
					WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind
			FROM pg_class c
			WHERE c.relnamespace = '` + o.Schema + `'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
				AND c.relowner <> '` + o.Owner + `'::regrole
				AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
					WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
		LOOP
			EXECUTE format('ALTER %s %s OWNER TO ` + o.Owner + `', r.kind, r.name);
		END LOOP;
		FOR r IN SELECT p.oid::regprocedure::text AS name FROM pg_proc p
			WHERE p.pronamespace = '` + o.Schema + `'::regnamespace AND p.proowner <> '` + o.Owner + `'::regrole
		LOOP
			EXECUTE format('ALTER ROUTINE %s OWNER TO ` + o.Owner + `', r.name);
		END LOOP;
		FOR r IN SELECT t.oid::regtype::text AS name, CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END AS kind
			FROM pg_type t
			WHERE t.typnamespace = '` + o.Schema + `'::regnamespace AND t.typowner <> '` + o.Owner + `'::regrole
				AND (t.typtype IN ('e', 'd', 'r')
					OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c'))
		LOOP
			EXECUTE format('ALTER %s %s OWNER TO ` + o.Owner + `', r.kind, r.name);
		END LOOP;
	END $$`
}

// concurrentCatalogUpdate tells whether err is one of the errors two sessions changing the
// same shared catalogue row at once get.
func concurrentCatalogUpdate(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "23505", "42710", "40001", "40P01": // unique, duplicate object, serialization, deadlock
		return true
	case "XX000":
		return strings.Contains(pe.Message, "tuple concurrently")
	}
	return false
}
