package service_test

import (
	"encoding/json"

	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/service"
)

// The command API is a micro service that `nats micro ls` / `stats` show, with its endpoints
// in queue group "merchant", and two replicas share the requests.
func TestCommandAPIReplicasShareTheRequestsOfOneQueueGroup(t *testing.T) {
	s := newStack(t)
	svctest.StartOn(t, service.Options(testConfig(t)), s.dsn, s.natsURL)

	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if _, err := s.mustCreateErr(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	stats := s.collect("$SRV.STATS."+api.ServiceName, 2)
	total := 0
	for _, raw := range stats {
		var st micro.Stats
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if st.Name != api.ServiceName || len(st.Endpoints) != 4 {
			t.Fatalf("stats %+v", st)
		}
		for _, e := range st.Endpoints {
			if e.QueueGroup != api.QueueGroup {
				t.Errorf("endpoint %s in queue group %q", e.Name, e.QueueGroup)
			}
			if e.Subject == api.Subject(api.EndpointCreate) {
				total += e.NumRequests
				if e.NumRequests == 0 {
					t.Errorf("replica %s handled no creation", st.ID)
				}
			}
		}
	}
	if total != 40 {
		t.Fatalf("%d creations counted across replicas, want 40", total)
	}
}

// mustCreateErr creates a merchant with a new email. (A NATS inbox id made emails that differed
// only in letter case, which email uniqueness takes for the same: the test failed now and then.)
func (s *stack) mustCreateErr() (api.Merchant, error) {
	return s.create("c1", "test", "Shop", uuid.NewString()+"@example.com")
}

// collect sends a request to a subject every instance answers and returns the first n replies.
func (s *stack) collect(subject string, n int) [][]byte {
	s.t.Helper()
	inbox := nats.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		s.t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := s.nc.PublishRequest(subject, inbox, nil); err != nil {
		s.t.Fatal(err)
	}
	var out [][]byte
	for len(out) < n {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			s.t.Fatalf("%d of %d replies to %s: %v", len(out), n, subject, err)
		}
		out = append(out, msg.Data)
	}
	return out
}
