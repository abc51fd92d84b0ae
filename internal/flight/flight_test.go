package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cold caches (issue 18): the webhook worker slots that find no cached copy of an
// endpoint or of its breaker share one read of it (as API key lookups do); a caller
// that gives up does not wait for it, and the read goes on for the others.
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
		v, err := Do(first, &g, "ep_1", 5*time.Second, read)
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
			v, err := Do(context.Background(), &g, "ep_1", 5*time.Second, read)
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
	// While the read is in flight every caller shares it; one that reached Do only
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

// A read stuck past its timeout ends with the deadline's error, and the next caller
// starts a fresh read.
func TestTP_StuckReadTimesOut(t *testing.T) {
	t.Parallel()
	var (
		g     singleflight.Group
		reads atomic.Int32
	)
	stuck := func(ctx context.Context) (int, error) {
		if reads.Add(1) == 1 {
			<-ctx.Done() // the database never answers the first read
			return 0, ctx.Err()
		}
		return 7, nil
	}
	if _, err := Do(context.Background(), &g, "k", 50*time.Millisecond, stuck); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the stuck read: %v, want context.DeadlineExceeded", err)
	}
	if v, err := Do(context.Background(), &g, "k", 50*time.Millisecond, stuck); err != nil || v != 7 {
		t.Fatalf("the read after the stuck one: %d, %v; want 7", v, err)
	}
}
