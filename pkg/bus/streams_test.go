package bus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestProvisionIsIdempotentAndCreatesEveryStream(t *testing.T) {
	t.Parallel()
	b := newTestBus(t) // provisions once
	ctx := context.Background()

	// Several services provisioning at once, then once more.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() { errs <- Provision(ctx, b.js, ProvisionOptions{}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent provision: %v", err)
		}
	}
	if err := Provision(ctx, b.js, ProvisionOptions{Replicas: 1, DuplicateWindow: 2 * time.Minute}); err != nil {
		t.Fatalf("provision again: %v", err)
	}

	want := map[string]string{
		"MERCHANTS": "merchant.>", "POOL": "pool.>", "PAYMENTS": "payment.>", "TREASURY": "treasury.>",
		"MERCHANT_WALLETS": "merchant_wallet.>", "DEVICES": "device.>", "SESSION_KEYS": "session_key.>",
		"DEADLETTER": "deadletter.>",
	}
	names := b.js.StreamNames(ctx)
	var got []string
	for n := range names.Name() {
		got = append(got, n)
	}
	if err := names.Err(); err != nil {
		t.Fatalf("listing streams: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("streams %v, want the %d of %v", got, len(want), want)
	}
	for name, subject := range want {
		s, err := b.js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		cfg := s.CachedInfo().Config
		if len(cfg.Subjects) != 1 || cfg.Subjects[0] != subject {
			t.Errorf("%s subjects %v, want [%s]", name, cfg.Subjects, subject)
		}
		if cfg.Storage != jetstream.FileStorage || cfg.Retention != jetstream.LimitsPolicy {
			t.Errorf("%s storage %v retention %v, want file and limits", name, cfg.Storage, cfg.Retention)
		}
		// Event streams are the log of their family and keep everything; dead letters are kept
		// 30 days (issue 16: the dead-letter stream grew for ever).
		maxAge := time.Duration(0)
		if name == DeadLetterStream {
			maxAge = 30 * 24 * time.Hour
		}
		if cfg.Replicas != 1 || cfg.Duplicates != DefaultDuplicateWindow || cfg.MaxAge != maxAge {
			t.Errorf("%s replicas %d duplicates %v max age %v, want 1, 2m, %v", name, cfg.Replicas, cfg.Duplicates,
				cfg.MaxAge, maxAge)
		}
	}
}

func TestStreamsTakeReplicasDuplicatesAndDeadLetterAgeFromTheOptions(t *testing.T) {
	t.Parallel()
	for _, cfg := range Streams(ProvisionOptions{Replicas: 3, DuplicateWindow: 5 * time.Minute, DeadLetterMaxAge: 48 * time.Hour}) {
		if cfg.Replicas != 3 || cfg.Duplicates != 5*time.Minute {
			t.Errorf("%s replicas %d duplicates %v, want 3 and 5m", cfg.Name, cfg.Replicas, cfg.Duplicates)
		}
		if (cfg.Name == DeadLetterStream) != (cfg.MaxAge == 48*time.Hour) || (cfg.Name != DeadLetterStream && cfg.MaxAge != 0) {
			t.Errorf("%s max age %v", cfg.Name, cfg.MaxAge)
		}
	}
}

func TestEnsurePullConsumerIsIdempotentAndUpdates(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	ctx := context.Background()
	spec := ConsumerSpec{Stream: "PAYMENTS", Durable: "ensure-test", FilterSubjects: []string{"payment.*.*.created"}}
	for range 2 {
		if _, err := EnsurePullConsumer(ctx, b.js, spec); err != nil {
			t.Fatalf("ensure consumer: %v", err)
		}
	}
	spec.FilterSubjects = append(spec.FilterSubjects, "payment.*.*.confirmed")
	spec.MaxAckPending = 7
	if _, err := EnsurePullConsumer(ctx, b.js, spec); err != nil {
		t.Fatalf("update consumer: %v", err)
	}
	c, err := b.js.Consumer(ctx, "PAYMENTS", "ensure-test")
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	cfg := c.CachedInfo().Config
	if len(cfg.FilterSubjects) != 2 || cfg.MaxAckPending != 7 || cfg.AckPolicy != jetstream.AckExplicitPolicy ||
		cfg.DeliverPolicy != jetstream.DeliverAllPolicy || cfg.DeliverSubject != "" || cfg.AckWait != DefaultPullAckWait ||
		cfg.MaxDeliver != -1 {
		t.Errorf("consumer config %+v", cfg)
	}

	for _, bad := range []ConsumerSpec{
		{Stream: "PAYMENTS", Durable: "bad.name"},
		{Stream: "PAYMENTS"},
		{Stream: "PAYMENTS", Durable: "d", BackOff: []time.Duration{time.Second, 0}},
		{Stream: "PAYMENTS", Durable: "d", MaxDeliver: 1, BackOff: []time.Duration{time.Second, time.Second}},
	} {
		if _, err := EnsurePullConsumer(ctx, b.js, bad); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("%+v: err %v, want ErrInvalidSpec", bad, err)
		}
	}
}

// A provisioning with another configuration updates the existing streams (a stream already
// configured is skipped, a different one is not), and StreamNames names every stream.
func TestProvisionUpdatesAChangedConfiguration(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	ctx := context.Background()
	if err := Provision(ctx, b.js, ProvisionOptions{DuplicateWindow: 5 * time.Minute, DeadLetterMaxAge: 48 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	names := StreamNames()
	if len(names) != 8 {
		t.Fatalf("StreamNames %v", names)
	}
	for _, name := range names {
		s, err := b.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if d := s.CachedInfo().Config.Duplicates; d != 5*time.Minute {
			t.Errorf("%s duplicate window %v after provisioning 5m", name, d)
		}
		if a := s.CachedInfo().Config.MaxAge; name == DeadLetterStream && a != 48*time.Hour {
			t.Errorf("%s max age %v after provisioning 48h", name, a)
		}
	}
}
