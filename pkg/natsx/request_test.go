package natsx_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/testkit"
)

// RequestJSON's four outcomes against a real server and a nats.go micro service: a decoded
// reply, an error reply with its code and body, no answer (nobody listens; too slow; a closed
// connection) as ErrUnavailable, and a reply that is not JSON as an error of its own.
func TestRequestJSONTellsRepliesErrorsAndSilenceApart(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	ctx := context.Background()
	type echo struct{ N int }

	var out echo
	if err := natsx.RequestJSON(ctx, nc, nats.NewMsg("rpc.echo"), echo{1}, &out); !errors.Is(err, natsx.ErrUnavailable) {
		t.Fatalf("nobody listening: %v, want ErrUnavailable", err)
	}

	svc, err := micro.AddService(nc, micro.Config{Name: "rpc", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	add := func(subject string, h micro.HandlerFunc) {
		if err := svc.AddEndpoint(strings.ReplaceAll(subject, ".", "_"), h, micro.WithEndpointSubject(subject)); err != nil {
			t.Fatal(err)
		}
	}
	add("rpc.echo", func(r micro.Request) { _ = r.Respond(r.Data()) })
	add("rpc.refuse", func(r micro.Request) { _ = r.Error("400", "bad n", []byte(`{"field":"n"}`)) })
	add("rpc.garble", func(r micro.Request) { _ = r.Respond([]byte("not json")) })
	add("rpc.slow", func(r micro.Request) { time.Sleep(time.Second); _ = r.Respond([]byte(`{}`)) })

	if err := natsx.RequestJSON(ctx, nc, nats.NewMsg("rpc.echo"), echo{7}, &out); err != nil || out.N != 7 {
		t.Fatalf("echo: %+v, %v", out, err)
	}
	var re *natsx.ReplyError
	err = natsx.RequestJSON(ctx, nc, nats.NewMsg("rpc.refuse"), echo{1}, &out)
	if !errors.As(err, &re) || re.Code != "400" || re.Description != "bad n" || string(re.Body) != `{"field":"n"}` {
		t.Fatalf("refused: %v (%+v)", err, re)
	}
	err = natsx.RequestJSON(ctx, nc, nats.NewMsg("rpc.garble"), echo{1}, &out)
	if err == nil || errors.Is(err, natsx.ErrUnavailable) || errors.As(err, &re) {
		t.Fatalf("a reply that is not JSON: %v, want a decoding error", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := natsx.RequestJSON(short, nc, nats.NewMsg("rpc.slow"), echo{1}, &out); !errors.Is(err, natsx.ErrUnavailable) {
		t.Fatalf("too slow: %v, want ErrUnavailable", err)
	}
	closed, err := nats.Connect(nc.ConnectedUrl())
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if err := natsx.RequestJSON(ctx, closed, nats.NewMsg("rpc.echo"), echo{1}, &out); !errors.Is(err, natsx.ErrUnavailable) {
		t.Fatalf("closed connection: %v, want ErrUnavailable", err)
	}
}
