package natsx_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/pkg/validation"
)

var errRefused = errors.New("refused")

// serve starts a Server named "calc" with the endpoints and stops it at the end of the test.
func serve(t *testing.T, nc *nats.Conn, cfg natsx.ServerConfig, endpoints ...natsx.Endpoint) *natsx.Server {
	t.Helper()
	cfg.Service = micro.Config{Name: "calc", Version: "1.0.0", QueueGroup: "calc"}
	if cfg.Errors == nil {
		cfg.Errors = func(err error) (*natsx.Error, bool) {
			if errors.Is(err, errRefused) {
				return &natsx.Error{Code: "REFUSED", Message: "no", Field: "n"}, false
			}
			return &natsx.Error{Code: "INTERNAL", Message: "internal error"}, true
		}
	}
	s, err := natsx.Serve(nc, cfg, endpoints...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

type num struct{ N int }

// A reply is the handler's value as JSON; a refusal is the service's *Error, in the body and in
// micro's error headers; no server, or no connection, is CodeUnavailable.
func TestCallGetsTheRepliesAndTheErrorsOfAServer(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	ctx := context.Background()
	_, err := natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, num{2})
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || e.Code != natsx.CodeUnavailable {
		t.Fatalf("no server: %v, want code %s", err, natsx.CodeUnavailable)
	}
	_, err = natsx.Call[num](ctx, nil, nats.NewMsg("calc.double"), time.Second, num{2})
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || e.Code != natsx.CodeUnavailable {
		t.Fatalf("no connection: %v, want code %s", err, natsx.CodeUnavailable)
	}
	serve(t, nc, natsx.ServerConfig{},
		natsx.Endpoint{Name: "double", Subject: "calc.double", Handle: func(_ context.Context, req micro.Request) (any, error) {
			var in num
			if err := json.Unmarshal(req.Data(), &in); err != nil {
				return nil, err
			}
			if in.N < 0 {
				return nil, errRefused
			}
			return num{2 * in.N}, nil
		}})

	if out, err := natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, num{21}); err != nil || out.N != 42 {
		t.Fatalf("double 21: %+v, %v", out, err)
	}
	_, err = natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, num{-1})
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || *e != (natsx.Error{Code: "REFUSED", Message: "no", Field: "n"}) {
		t.Fatalf("double -1: %v, want the REFUSED error", err)
	}
	msg, err := nc.Request("calc.double", []byte(`{"N":-1}`), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get(micro.ErrorCodeHeader) != "REFUSED" || msg.Header.Get(micro.ErrorHeader) != "no" {
		t.Fatalf("error headers: %v, want the code and message of the body", msg.Header)
	}
	_, err = natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, "not a number")
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || e.Code != "INTERNAL" {
		t.Fatalf("an undecodable request: %v, want what Errors made of it", err)
	}
}

// JSON hands the handler the decoded request (the zero request for no data), and answers a
// request that is not its JSON with a *validation.Error the handler never sees.
func TestJSONDecodesTheRequestAndRefusesOneThatIsNotItsJSON(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	ctx := context.Background()
	var calls atomic.Int32
	serve(t, nc, natsx.ServerConfig{Errors: func(err error) (*natsx.Error, bool) {
		var v *validation.Error
		if errors.As(err, &v) {
			return &natsx.Error{Code: "VALIDATION", Message: v.Message, Field: v.Field}, false
		}
		return &natsx.Error{Code: "INTERNAL", Message: "internal error"}, true
	}}, natsx.Endpoint{Name: "double", Subject: "calc.double", Handle: natsx.JSON(func(_ context.Context, in num) (any, error) {
		calls.Add(1)
		return num{2 * in.N}, nil
	})})

	if out, err := natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, num{21}); err != nil || out.N != 42 {
		t.Fatalf("double 21: %+v, %v", out, err)
	}
	_, err := natsx.Call[num](ctx, nc, nats.NewMsg("calc.double"), time.Second, "not a number")
	want := natsx.Error{Code: "VALIDATION", Message: "request is not valid JSON"}
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || *e != want {
		t.Fatalf("an undecodable request: %v, want %+v", err, want)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the handler ran %d times, want 1 (never for the undecodable request)", n)
	}
	// A request with no data is the zero request.
	msg, err := nc.Request("calc.double", nil, time.Second)
	if err != nil || msg.Header.Get(micro.ErrorCodeHeader) != "" || string(msg.Data) != `{"N":0}` {
		t.Fatalf("an empty request: %v, %v %s, want the reply to the zero request", err, msg.Header, msg.Data)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the handler ran %d times, want 2", n)
	}
}

// Each request runs on its own goroutine: one that waits does not hold up another; Stop waits for
// the one still running, whose reply still goes out.
func TestAServerRunsRequestsAtOnceAndStopWaitsForThem(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	release, started := make(chan struct{}), make(chan struct{})
	s := serve(t, nc, natsx.ServerConfig{},
		natsx.Endpoint{Name: "wait", Subject: "calc.wait", Handle: func(context.Context, micro.Request) (any, error) {
			close(started)
			<-release
			return num{1}, nil
		}},
		natsx.Endpoint{Name: "now", Subject: "calc.now", Handle: func(context.Context, micro.Request) (any, error) {
			return num{2}, nil
		}})

	waited := make(chan error, 1)
	go func() {
		_, err := natsx.Call[num](context.Background(), nc, nats.NewMsg("calc.wait"), 10*time.Second, num{})
		waited <- err
	}()
	<-started
	if out, err := natsx.Call[num](context.Background(), nc, nats.NewMsg("calc.now"), 5*time.Second, num{}); err != nil || out.N != 2 {
		t.Fatalf("a request beside a waiting one: %+v, %v", out, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop() }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the request in flight at Stop: %v, want its reply", err)
	}
}

// A request gets the server's Timeout as its deadline, within the server's Context.
func TestARequestEndsWithItsTimeout(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	serve(t, nc, natsx.ServerConfig{Timeout: 50 * time.Millisecond, Errors: func(err error) (*natsx.Error, bool) {
		if errors.Is(err, context.DeadlineExceeded) {
			return &natsx.Error{Code: "TIMEOUT", Message: err.Error()}, false
		}
		return &natsx.Error{Code: "INTERNAL", Message: err.Error()}, true
	}}, natsx.Endpoint{Name: "hang", Subject: "calc.hang", Handle: func(ctx context.Context, _ micro.Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	_, err := natsx.Call[num](context.Background(), nc, nats.NewMsg("calc.hang"), 5*time.Second, num{})
	if e := (*natsx.Error)(nil); !errors.As(err, &e) || e.Code != "TIMEOUT" {
		t.Fatalf("a request that hangs: %v, want TIMEOUT", err)
	}
}

// A reply of a plain micro error, without the one error shape in its body, takes its code and
// message from the headers and keeps what the body has (a server of before that shape put the
// code only in the header).
func TestCallReadsTheHeadersOfAReplyWithoutTheErrorShape(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	svc, err := micro.AddService(nc, micro.Config{Name: "old", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	for subject, h := range map[string]micro.HandlerFunc{
		"old.limited": func(r micro.Request) {
			_ = r.Error("429", "slow down", []byte(`{"message":"slow down","retry_after":3}`))
		},
		"old.bare":    func(r micro.Request) { _ = r.Error("500", "internal error", nil) },
		"old.garbled": func(r micro.Request) { _ = r.Error("503", "busy", []byte("not json")) },
	} {
		if err := svc.AddEndpoint(subject[4:], h, micro.WithEndpointSubject(subject)); err != nil {
			t.Fatal(err)
		}
	}
	for subject, want := range map[string]natsx.Error{
		"old.limited": {Code: "429", Message: "slow down", RetryAfter: 3},
		"old.bare":    {Code: "500", Message: "internal error"},
		"old.garbled": {Code: "503", Message: "busy"},
	} {
		_, err := natsx.Call[num](context.Background(), nc, nats.NewMsg(subject), 5*time.Second, num{})
		if e := (*natsx.Error)(nil); !errors.As(err, &e) || *e != want {
			t.Fatalf("%s: %v, want %+v", subject, err, want)
		}
	}
}

// A reply that is not Out's JSON is an error, and Call returns Out's zero value with it, not
// the fields it decoded before the one that failed.
func TestCallReturnsTheZeroReplyWithAnError(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	serve(t, nc, natsx.ServerConfig{},
		natsx.Endpoint{Name: "odd", Subject: "calc.odd", Handle: func(context.Context, micro.Request) (any, error) {
			return map[string]any{"N": 5, "M": "not a number"}, nil
		}})
	type pair struct{ N, M int }
	out, err := natsx.Call[pair](context.Background(), nc, nats.NewMsg("calc.odd"), 5*time.Second, num{})
	if err == nil || out != (pair{}) {
		t.Fatalf("a reply that is not the type's JSON: %+v, %v; want the zero pair and an error", out, err)
	}
}

func TestServerEnvRunsNATSWithTheDeployedCollectorUnlessGOGCIsSet(t *testing.T) {
	t.Parallel()
	got := natsx.ServerEnv([]string{"PATH=/bin"})
	if want := []string{"PATH=/bin", "GOGC=" + natsx.ServerGOGC}; !slices.Equal(got, want) {
		t.Errorf("ServerEnv = %q, want %q", got, want)
	}
	set := []string{"GOGC=50", "PATH=/bin"}
	if got := natsx.ServerEnv(set); !slices.Equal(got, set) {
		t.Errorf("ServerEnv with GOGC set = %q, want it unchanged", got)
	}
}
