package ledger_test

import (
	"context"
	"errors"
	"log"
	"os"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/koder/eventhub/ledger"
)

// Work a job in the process that inserts it, without River's fetch: insert it claimed
// in a transaction of InTx, attempt it once the transaction committed, and record the
// outcome as River's executor would (the webhook transport's first attempts do this,
// in a pool, with the outcomes written in batches).
// Where claiming is not possible (SQLite, not started) the job goes to River's queue.
// It needs PostgreSQL, so it is compiled, not run.
func ExampleLedger_InsertClaimedTx() {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{DSN: os.Getenv("HUB_TEST_POSTGRES_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	work := func(ctx context.Context, job *river.Job[exampleArgs]) error { return nil }
	river.AddWorker(l.Workers(), river.WorkFunc(work)) // River's retries, if any
	if err := l.AddQueue(river.QueueDefault, 10); err != nil {
		log.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		log.Fatal(err)
	}

	params := []river.InsertManyParams{{Args: exampleArgs{Msg: "hello"}}}
	var claimed []*rivertype.JobRow
	err = l.InTx(ctx, func(tx any) error {
		var err error
		claimed, err = l.InsertClaimedTx(ctx, tx, params)
		if errors.Is(err, ledger.ErrNoClaim) {
			_, err = l.InsertManyTx(ctx, tx, params)
		}
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Committed: the claimed jobs are this process's to attempt. (Code that writes in a
	// transaction it does not commit itself starts them from l.AfterCommit instead.)
	outs := make([]ledger.Outcome, len(claimed))
	for i, row := range claimed {
		job := &river.Job[exampleArgs]{JobRow: row, Args: exampleArgs{Msg: "hello"}}
		outs[i] = ledger.Outcome{Job: row, Err: work(ctx, job)}
	}
	if err := l.Finish(ctx, outs); err != nil {
		log.Print(err) // left running: taken over when the lease ends, and worked again
	}
}
