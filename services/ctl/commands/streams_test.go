package commands_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/ctl/commands"
	merchant "github.com/payplat/platform/services/merchant/service"
)

// After a service has provisioned the bus, `streams` lists every stream of DESIGN §3 and the
// dead-letter stream, as a table and as JSON.
func TestStreamsListsEveryStream(t *testing.T) {
	url := testkit.NATS(t)
	svctest.StartOn(t, merchant.Options(merchantConfig(t)),
		testkit.NewDatabase(t), url)

	out, _, err := ctl(t, map[string]string{"NATS_URL": url}, "streams")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{events.DeadLetterStream}
	for _, s := range events.Streams() {
		want = append(want, s.Name)
	}
	for _, name := range want {
		if !strings.Contains(out, name) {
			t.Errorf("streams table lacks %s:\n%s", name, out)
		}
	}

	out, _, err = ctl(t, map[string]string{"NATS_URL": url}, "streams", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Streams []commands.StreamReport }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("streams --json: %v\n%s", err, out)
	}
	if len(got.Streams) != len(want) {
		t.Fatalf("%d streams in JSON, want %d", len(got.Streams), len(want))
	}
}

func TestStreamsReportsUnreachableNATS(t *testing.T) {
	_, _, err := ctl(t, map[string]string{"NATS_URL": "nats://127.0.0.1:1"}, "streams")
	if err == nil || !strings.Contains(err.Error(), "connecting to NATS") {
		t.Fatalf("got %v, want a connection error", err)
	}
}
