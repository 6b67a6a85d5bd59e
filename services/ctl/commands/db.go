package commands

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/pkg/pg"
)

func newDBCommand(g *globals) *cobra.Command {
	return group("db", "Prepare the platform's PostgreSQL database", &cobra.Command{
		Use:   "roles",
		Short: "Lay out a role per service owning its schema, with read-only grants across schemas",
		Long: `Connects with DATABASE_URL (a superuser, or the database owner when the service roles
already exist and the owner is a member of each) and lays out the database for per-service
roles: each role owns its service's schema (objects created before are handed over), the
services that read another's schema get USAGE and SELECT there and nothing else, and the
database owner becomes a member of every service role, so that replays and rebuilds run as
it. Roles that do not exist yet are created with LOGIN and no password (set one, or let
CloudNativePG's managed roles create them first). Idempotent: run it before the services
start, and again after an upgrade. The layout is pkg/pg.Roles; docs/SECURITY.md explains it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn := g.getenv("DATABASE_URL")
			if dsn == "" {
				return errors.New("no database: set DATABASE_URL")
			}
			ctx, cancel := g.context(cmd)
			defer cancel()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return fmt.Errorf("connecting to the database: %w", err)
			}
			defer conn.Close(ctx)
			if err := pg.Bootstrap(ctx, conn); err != nil {
				return err
			}
			for _, o := range pg.Roles {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: owned by %s, read by %v\n", o.Schema, o.Owner, o.Readers)
			}
			return nil
		},
	})
}
