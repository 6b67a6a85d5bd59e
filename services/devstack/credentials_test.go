package devstack

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A missing file reads as empty credentials; written ones read back equal, from a file of mode
// 600 replaced whole, with no temporary file left behind.
func TestCredentialsReadBackAsWrittenFromAnOwnerOnlyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), CredentialsFile)
	empty, err := ReadCredentials(path)
	if err != nil || !reflect.DeepEqual(empty, Credentials{}) {
		t.Fatalf("missing file: %+v, %v", empty, err)
	}
	want := Credentials{
		GatewayURL:  "http://127.0.0.1:8080",
		DatabaseURL: "postgres://postgres@127.0.0.1:5433/payplat?sslmode=disable",
		NATSURL:     "nats://127.0.0.1:4250",
		AdminToken:  "adm",
		CronSecret:  "cron",
		Company:     &Company{ID: "c1", Name: "Demo Company"},
		Keys:        &APIKeys{SKTest: "sk_test_1", SKLive: "sk_live_1", PKTest: "pk_test_1", PKLive: "pk_live_1"},
		Health:      map[string]string{"pool": "http://127.0.0.1:8082/readyz"},
	}
	for range 2 { // the second write replaces the file
		if err := WriteCredentials(path, want); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("credentials file mode %o, want 600", perm)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestCredentialsFileHasEveryFieldUnderItsSnakeCaseNameEvenWhenEmpty(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), CredentialsFile)
	c := Credentials{Company: &Company{ID: "c1", Name: "n"}, Keys: &APIKeys{SKTest: "s"}, Health: map[string]string{}}
	if err := WriteCredentials(path, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"gateway_url", "database_url", "nats_url", "admin_token", "cron_secret",
		`"company"`, `"id"`, `"name"`, `"keys"`, "sk_test", "sk_live", "pk_test", "pk_live", `"health"`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("credentials file lacks %s:\n%s", field, data)
		}
	}
}
