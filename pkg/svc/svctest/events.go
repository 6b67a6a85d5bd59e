package svctest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
)

// EventMsg is msg as an internal publisher puts it on the bus: on its subject, in protobuf,
// with its event id as Nats-Msg-Id. A test that publishes a copy under another id (as a
// redelivery would present it) or none (so JetStream stores every copy) changes that header.
func EventMsg(t testing.TB, msg proto.Message) *nats.Msg {
	t.Helper()
	subject, err := events.SubjectFor(msg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := events.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set("Content-Type", events.ContentTypeProtobuf)
	m.Header.Set(nats.MsgIdHdr, events.Meta(msg).GetEventId())
	return m
}

// Publish publishes m to JetStream and fails the test unless a stream stored it.
func Publish(t testing.TB, js jetstream.JetStream, m *nats.Msg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatalf("publishing %s: %v", m.Subject, err)
	}
}
