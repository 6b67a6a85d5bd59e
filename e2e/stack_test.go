package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/api/client"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/devstack"
)

// binDir holds the service binaries built once for the whole run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "payplat-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := 1
	if err := buildServices(dir); err != nil {
		fmt.Fprintln(os.Stderr, "building the service binaries:", err)
	} else {
		code = testkit.Main(m)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildServices builds the five service binaries into dir, as `make build` does.
func buildServices(dir string) error {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return err
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range devstack.Services {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	// The NATS server runs as its own process too (built from the module the platform uses),
	// like the services: nothing of the stack shares the test's address space.
	cmd = exec.Command("go", "build", "-o", filepath.Join(dir, "nats-server"), "github.com/nats-io/nats-server/v2")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building nats-server: %v: %s", err, b)
	}
	return nil
}

// startNATS runs a JetStream-enabled nats-server process (the one buildServices built) on a
// free port until the test ends, with authorization on: only natsauth's users, whose keys it
// returns, may connect, and each service runs with its own user's permissions only.
func startNATS(t testing.TB) (string, natsauth.Keys) {
	t.Helper()
	url, keys, _ := testkit.RunAuthNATSServer(t, filepath.Join(binDir, "nats-server"))
	return url, keys
}

// stack is the whole platform running as separate processes.
type stack struct {
	t   testing.TB
	url string
	// http checks every exchange against the OpenAPI document (api_test.go).
	http  *http.Client
	creds devstack.Credentials
	// dataDir is the dev stack's DATA_DIR (its dev-secrets.json holds the wallet account keys).
	dataDir string
	// natsURL and natsKeys reach the stack's NATS as any of its users (natsauth).
	natsURL  string
	natsKeys natsauth.Keys
	out      *testkit.Buffer
	nc       *nats.Conn
	js       jetstream.JetStream
	// health is every service's health listener address, by service (replica 0).
	health map[string]string
	// stop stops the platform before the test ends (it stops at the end anyway).
	stop func()
}

// newStack starts the platform on a fresh database and JetStream server, with extra
// environment for the services, and stops it when the test ends.
func newStack(t testing.TB, extraEnv ...string) *stack {
	t.Helper()
	return newStackOf(t, 1, extraEnv...)
}

// newStackOf is newStack with replicas processes of every service (on one NATS server).
func newStackOf(t testing.TB, replicas int, extraEnv ...string) *stack {
	t.Helper()
	dsn := testkit.NewDatabase(t)
	natsURL, natsKeys := startNATS(t)
	cfg, err := devstack.LoadConfig(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Replicas = replicas
	// The gateway, then the five health listeners; replica r listens 10r above the first one's
	// ports (devstack.Config.GatewayAddrOf, HealthAddrOf).
	base := testkit.FreePorts(t, 10*(replicas-1)+6)
	cfg.BinDir, cfg.DataDir = binDir, t.TempDir()
	cfg.DatabaseURL, cfg.NATSURL, cfg.NATSKeysDir = dsn, natsURL, natsKeys.Dir
	cfg.GatewayAddr = fmt.Sprintf("127.0.0.1:%d", base)
	cfg.HealthPortBase = base + 1
	cfg.CronInterval = 0
	cfg.LogLevel = "warn"
	cfg.ExtraEnv = extraEnv
	s := &stack{t: t, url: cfg.GatewayURL(), http: contractClient(t), out: &testkit.Buffer{}, dataDir: cfg.DataDir,
		natsURL: natsURL, natsKeys: natsKeys, health: map[string]string{}}
	for _, name := range devstack.Services {
		s.health[name] = cfg.HealthAddrOf(devstack.Instance{Service: name})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runErr error
	stopped := make(chan struct{})
	go func() { runErr = devstack.Run(ctx, cfg, s.out); close(stopped) }()
	started := false
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			<-stopped
			if started && runErr != nil {
				t.Errorf("stack stopped with an error: %v", runErr)
			}
			// Each service runs with only its natsauth user's permissions; one it lacks shows
			// up as a refused subject in its log (svc logs every NATS error).
			if out := s.out.String(); strings.Contains(out, "Permissions Violation") {
				t.Errorf("a service was refused a NATS subject: a permission missing from natsauth.Users")
			}
			if t.Failed() {
				t.Logf("stack output:\n%s", s.out.String())
			}
		})
	}
	t.Cleanup(s.stop)
	credsPath := filepath.Join(cfg.DataDir, devstack.CredentialsFile)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if c, err := devstack.ReadCredentials(credsPath); err == nil && c.Keys != nil {
			s.creds, started = c, true
			break
		}
		select {
		case <-stopped:
			t.Fatalf("stack did not start: %v\n%s", runErr, s.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack not ready after 3 minutes:\n%s", s.out.String())
		}
	}
	// The tests play the internal teams and the operators: the operator may publish every family.
	s.nc = s.connectAs(natsauth.Operator)
	if s.js, err = jetstream.New(s.nc); err != nil {
		t.Fatal(err)
	}
	return s
}

// connectAs connects to the stack's NATS as natsauth user name, with its inbox prefix, until the
// test ends.
func (s *stack) connectAs(name string, opts ...nats.Option) *nats.Conn {
	s.t.Helper()
	c := natsx.Client{Name: "e2e-" + name, User: name, Creds: s.natsKeys.SeedFile(name)}
	// Refusals are what some tests look for (nc.LastError); nats.go would print each one.
	quiet := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	nc, err := c.Connect(s.natsURL, append([]nats.Option{quiet}, opts...)...)
	if err != nil {
		s.t.Fatalf("connecting to NATS as %s: %v", name, err)
	}
	s.t.Cleanup(nc.Close)
	return nc
}

// response is an HTTP answer with its JSON body decoded.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.raw) }

// errorCode is the error body's code (DESIGN §5).
func (r response) errorCode() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// call sends a request with the given API key (x-api-key) or, for "Bearer ..." values, an
// Authorization header; body is marshalled as JSON unless nil.
func (s *stack) call(method, path, auth string, body any, headers ...string) response {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case strings.HasPrefix(auth, "Bearer "):
		req.Header.Set("Authorization", auth)
	case auth != "":
		req.Header.Set("x-api-key", auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	_ = json.Unmarshal(raw, &r.body)
	if err := checkTimes(r.body); err != nil {
		s.t.Errorf("%s %s: %v", method, path, err)
	}
	return r
}

// must fails the test unless the response has the status.
func (s *stack) must(r response, status int) response {
	s.t.Helper()
	if r.status != status {
		s.t.Fatalf("got %s, want %d", r, status)
	}
	return r
}

// company is a company created through the admin API, with its four keys.
type company struct {
	id   string
	keys map[string]string
}

func (s *stack) newCompany(name string) company {
	s.t.Helper()
	r, err := s.operator().CreateCompanyWithResponse(bg, nil, client.CreateCompanyJSONRequestBody{Name: name}, idempotent())
	ok(s.t, r, err)
	k := r.JSON201.Keys
	return company{id: r.JSON201.Company.Id,
		keys: map[string]string{"sk_test": k.SkTest, "sk_live": k.SkLive, "pk_test": k.PkTest, "pk_live": k.PkLive}}
}

// publish puts an event on the bus the way an internal team does: protobuf, with its subject
// and Nats-Msg-Id = event id.
func (s *stack) publish(msg proto.Message) {
	s.t.Helper()
	s.publishAs(msg, events.Meta(msg).GetEventId())
}

// publishAs publishes msg with the Nats-Msg-Id msgID: a publisher's retry after the stream's
// duplicate window (or with a fresh message id) looks like this.
func (s *stack) publishAs(msg proto.Message, msgID string) {
	s.t.Helper()
	m, err := eventMsg(msg, msgID)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.js.PublishMsg(context.Background(), m); err != nil {
		s.t.Fatal(err)
	}
}

// eventMsg is an event as an internal team publishes it: protobuf on its subject, with the
// Nats-Msg-Id msgID.
func eventMsg(msg proto.Message, msgID string) (*nats.Msg, error) {
	subject, err := events.SubjectFor(msg)
	if err != nil {
		return nil, err
	}
	data, err := events.Marshal(msg)
	if err != nil {
		return nil, err
	}
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set("Content-Type", events.ContentTypeProtobuf)
	m.Header.Set(nats.MsgIdHdr, msgID)
	return m, nil
}

// eventually retries check until it passes or a minute has gone.
func eventually(t testing.TB, check func() error) {
	t.Helper()
	testkit.WaitFor(t, time.Minute, 50*time.Millisecond, check)
}
