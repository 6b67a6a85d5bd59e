package devstack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitReadyPollsUntil200(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) < 3 {
			http.Error(w, "nats: not connected", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := WaitReady(ctx, srv.Client(), []Target{{Name: "pool", URL: srv.URL + "/readyz"}}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

func TestWaitReadyNamesTheLaggard(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ok.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "postgres: connection refused", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, ok.Client(), []Target{
		{Name: "gateway", URL: ok.URL + "/readyz"},
		{Name: "merchant", URL: down.URL + "/readyz"},
	}, 10*time.Millisecond)
	if err == nil {
		t.Fatal("ready although merchant answers 503")
	}
	for _, want := range []string{"merchant", "503", "postgres: connection refused", "deadline exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestWaitReadyRetriesRefusedConnections(t *testing.T) {
	t.Parallel()
	url := "http://127.0.0.1:" + itoa(freePort(t)) + "/readyz"
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, http.DefaultClient, []Target{{Name: "pool", URL: url}}, 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
}
