package webhook

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cold caches (issue 18): the worker slots that find no cached copy of an endpoint or
// of its breaker share one read of it; a caller that gives up does not wait for it.
func TestTP_ColdReadsShared(t *testing.T) {
	t.Parallel()
	var (
		g       singleflight.Group
		reads   atomic.Int32
		started = make(chan struct{})
		release = make(chan struct{})
	)
	read := func(ctx context.Context) (string, error) {
		if reads.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
			return "endpoint", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	const callers = 50
	first, cancelFirst := context.WithCancel(context.Background())
	results := make(chan error, callers)
	go func() { // the read runs under this caller's context, which it cancels below
		v, err := readOnce(first, &g, "ep_1", read)
		if err == nil {
			err = errors.New("the cancelled caller got " + v)
		}
		results <- err
	}()
	<-started
	var (
		wg      sync.WaitGroup
		entered atomic.Int32
	)
	for range callers - 1 {
		wg.Go(func() {
			entered.Add(1)
			v, err := readOnce(context.Background(), &g, "ep_1", read)
			if err == nil && v != "endpoint" {
				err = errors.New("got " + v)
			}
			results <- err
		})
	}
	for entered.Load() < callers-1 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // from entered to waiting on the read in flight (most of them)
	cancelFirst()
	if err := <-results; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first caller, cancelled while waiting: %v, want context.Canceled", err)
	}
	// While the read is in flight every caller shares it; one that reached readOnce only
	// after the release may start a read of its own, as it should.
	inFlight := reads.Load()
	close(release)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Error(err)
		}
	}
	if inFlight != 1 {
		t.Errorf("%d reads for %d concurrent callers, want 1", inFlight, callers)
	}
}
