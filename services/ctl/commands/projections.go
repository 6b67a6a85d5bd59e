package commands

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
	merchantadapters "github.com/payplat/platform/services/merchant/adapters"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	paymentservice "github.com/payplat/platform/services/payment-projection/service"
	pooladapters "github.com/payplat/platform/services/pool/adapters"
)

// projectionEnv is what a projection's definition is built from.
type projectionEnv struct {
	dsn string
	js  func() (jetstream.JetStream, error)
}

// projectionSpec is one projection operators can rebuild and verify.
type projectionSpec struct {
	name   string
	schema string
	source string // for people: "event store merchant.events", "stream PAYMENTS"
	// definition connects to the projection's schema and returns its definition and the pool
	// to run it on (closed by the caller).
	definition func(ctx context.Context, env projectionEnv) (projection.Definition, *pgxpool.Pool, error)
}

// storeProjection is a projection of the event store in its service's schema.
func storeProjection(name, schema string, def func(store *eventstore.Store, schema string) projection.Definition) projectionSpec {
	return projectionSpec{name: name, schema: schema, source: "event store " + schema + ".events",
		definition: func(ctx context.Context, env projectionEnv) (projection.Definition, *pgxpool.Pool, error) {
			db, err := pg.Connect(ctx, env.dsn, schema)
			if err != nil {
				return projection.Definition{}, nil, err
			}
			return def(eventstore.New(db), schema), db, nil
		}}
}

// projections lists every projection, by name.
func projections() map[string]projectionSpec {
	specs := []projectionSpec{
		storeProjection(merchantadapters.ReadModelName, merchantmigrations.Schema, merchantadapters.ReadModelDefinition),
		storeProjection(pooladapters.ReadModelName, pooladapters.Schema, pooladapters.ReadModelDefinition),
		{name: "payments", schema: paymentmigrations.Schema, source: "stream " + paymentservice.Stream,
			definition: func(ctx context.Context, env projectionEnv) (projection.Definition, *pgxpool.Pool, error) {
				js, err := env.js()
				if err != nil {
					return projection.Definition{}, nil, err
				}
				db, err := pg.Connect(ctx, env.dsn, paymentmigrations.Schema)
				if err != nil {
					return projection.Definition{}, nil, err
				}
				return paymentservice.Definition(js), db, nil
			}},
	}
	out := make(map[string]projectionSpec, len(specs))
	for _, s := range specs {
		out[s.name] = s
	}
	return out
}

func projectionNames() []string {
	var names []string
	for n := range projections() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// projectionsCmd holds what the projections subcommands share: the database and NATS flags.
type projectionsCmd struct {
	g     *globals
	dbURL string
	flags natsFlags
}

func newProjectionsCommand(g *globals) *cobra.Command {
	p := &projectionsCmd{g: g}
	cmd := &cobra.Command{
		Use:   "projections",
		Short: "List, rebuild and verify the read models (projections of the event stores and streams)",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&p.dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	p.flags.register(pf)
	cmd.AddCommand(p.listCommand(), p.rebuildCommand(), p.verifyCommand())
	return cmd
}

// open returns the definition of projection name with its database and, for a stream-fed
// one, its NATS connection; done closes them.
func (p *projectionsCmd) open(ctx context.Context, name string) (def projection.Definition, db *pgxpool.Pool, done func(), err error) {
	spec, ok := projections()[name]
	if !ok {
		return projection.Definition{}, nil, nil, fmt.Errorf("no projection %q; known: %s", name, strings.Join(projectionNames(), ", "))
	}
	dsn := firstSet(p.dbURL, p.g.getenv("DATABASE_URL"))
	if dsn == "" {
		return projection.Definition{}, nil, nil, errors.New("no database: set DATABASE_URL (or --database-url)")
	}
	var nc *nats.Conn
	env := projectionEnv{dsn: dsn, js: func() (jetstream.JetStream, error) {
		var err error
		if nc, err = p.flags.connect(p.g); err != nil {
			return nil, err
		}
		return jetstream.New(nc)
	}}
	def, db, err = spec.definition(ctx, env)
	closeAll := func() {
		if db != nil {
			db.Close()
		}
		if nc != nil {
			nc.Close()
		}
	}
	if err != nil {
		closeAll()
		return projection.Definition{}, nil, nil, err
	}
	return def, db, closeAll, nil
}

// withProjection is the RunE of a command on the projection its argument names: run gets it
// opened, with its database, and everything opened is closed after.
func (p *projectionsCmd) withProjection(run func(ctx context.Context, cmd *cobra.Command, def projection.Definition, db *pgxpool.Pool) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		def, db, done, err := p.open(ctx, args[0])
		if err != nil {
			return err
		}
		defer done()
		return run(ctx, cmd, def, db)
	}
}

func (p *projectionsCmd) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the projections with their schema, tables and source",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			type row struct {
				Name   string `json:"name"`
				Schema string `json:"schema"`
				Source string `json:"source"`
			}
			var rows []row
			for _, n := range projectionNames() {
				s := projections()[n]
				rows = append(rows, row{s.name, s.schema, s.source})
			}
			if p.g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"projections": rows})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSCHEMA\tSOURCE")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Schema, r.Source)
			}
			return tw.Flush()
		},
	}
}

func (p *projectionsCmd) rebuildCommand() *cobra.Command {
	var dryRun bool
	rebuild := &cobra.Command{
		Use:   "rebuild <name>",
		Short: "Rebuild a projection's tables from its source while the system keeps serving (blue/green)",
		Long: "Builds shadow copies of the projection's tables from its source, catches up with the live\n" +
			"position under a short lock against writers, and swaps them in atomically: readers see the old\n" +
			"tables until the commit and the new ones after it, never a half-built table. Only tables are\n" +
			"written: no event is published and no webhook is sent again. A second rebuild or verify of the\n" +
			"same projection is refused while one runs.",
		Args: cobra.ExactArgs(1),
		RunE: p.withProjection(func(ctx context.Context, cmd *cobra.Command, def projection.Definition, db *pgxpool.Pool) error {
			if dryRun {
				return p.dryRun(cmd, def)
			}
			bar := newBar(cmd, "rebuilding "+def.Name())
			res, err := projection.Rebuild(ctx, db, def, projection.RebuildOptions{Progress: bar.progress})
			bar.finish()
			if err != nil {
				return err
			}
			return printRebuild(cmd, p.g, def, res)
		}),
	}
	rebuild.Flags().BoolVar(&dryRun, "dry-run", false, "only report how many events a rebuild would apply")
	return rebuild
}

// dryRun reports how many events a rebuild of def would apply.
func (p *projectionsCmd) dryRun(cmd *cobra.Command, def projection.Definition) error {
	n, err := def.Source.Count(cmd.Context())
	if err != nil {
		return err
	}
	if p.g.json {
		return printJSON(cmd.OutOrStdout(), map[string]any{"projection": def.Name(), "events": n, "tables": def.Tables})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "dry run: rebuilding %s would apply %d events to %s.%s\n", def.Name(), n,
		def.Schema, strings.Join(def.Tables, ", "+def.Schema+"."))
	return nil
}

func (p *projectionsCmd) verifyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "verify <name>",
		Short: "Rebuild a projection into a scratch schema and print the rows that differ from the live tables",
		Long:  "Exits with status 1 when any row differs. The live tables are not changed.",
		Args:  cobra.ExactArgs(1),
		RunE: p.withProjection(func(ctx context.Context, cmd *cobra.Command, def projection.Definition, db *pgxpool.Pool) error {
			bar := newBar(cmd, "verifying "+def.Name())
			diffs, res, err := projection.Verify(ctx, db, def, projection.RebuildOptions{Progress: bar.progress})
			bar.finish()
			if err != nil {
				return err
			}
			if p.g.json {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"projection": def.Name(), "events": res.Events,
					"differences": diffRows(diffs)}); err != nil {
					return err
				}
			} else {
				for _, d := range diffs {
					fmt.Fprintf(cmd.OutOrStdout(), "%s only in the %s table %s: %s\n", sideMark(d.Side), d.Side, d.Table, d.Row)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d events, %d differing rows\n", def.Name(), res.Events, len(diffs))
			}
			if len(diffs) > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("projection %s differs from its source in %d rows", def.Name(), len(diffs))}
			}
			return nil
		}),
	}
}

// ExitError makes the command exit with Code after printing Err.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

func sideMark(side string) string {
	if side == "live" {
		return "-"
	}
	return "+"
}

func diffRows(diffs []projection.Diff) []map[string]string {
	out := []map[string]string{}
	for _, d := range diffs {
		out = append(out, map[string]string{"table": d.Table, "side": d.Side, "row": d.Row})
	}
	return out
}

func printRebuild(cmd *cobra.Command, g *globals, def projection.Definition, res projection.RebuildResult) error {
	rate := float64(res.Events+res.Skipped) / max(res.Elapsed.Seconds(), 1e-9)
	if g.json {
		return printJSON(cmd.OutOrStdout(), map[string]any{"projection": def.Name(), "events": res.Events,
			"skipped": res.Skipped, "seconds": res.Elapsed.Seconds(), "events_per_second": rate})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "rebuilt %s: %d events (%d skipped as dead letters) in %s, %.0f events/s\n",
		def.Name(), res.Events, res.Skipped, res.Elapsed.Round(time.Millisecond), rate)
	return nil
}

// bar is a progress bar on stderr with the rate and the time left. It is created at the first
// progress report, when the total is known (a bar of unknown length runs a spinner goroutine).
type bar struct {
	cmd  *cobra.Command
	what string
	pb   *progressbar.ProgressBar
}

func newBar(cmd *cobra.Command, what string) *bar { return &bar{cmd: cmd, what: what} }

func (b *bar) progress(done, total int64) {
	if b.pb == nil {
		b.pb = progressbar.NewOptions64(max(total, 1),
			progressbar.OptionSetWriter(b.cmd.ErrOrStderr()),
			progressbar.OptionSetDescription(b.what),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("events"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.cmd.ErrOrStderr()) }),
		)
	}
	if total > b.pb.GetMax64() {
		b.pb.ChangeMax64(total)
	}
	_ = b.pb.Set64(done)
}

func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Finish()
	}
}
