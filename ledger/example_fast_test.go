package ledger_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/ledger"
)

// Insert many jobs in the caller's transaction when their ids are not needed: River
// neither returns nor decodes the rows (COPY FROM on PostgreSQL), and this process's
// producers are woken at the commit as with InsertManyTx.
func ExampleLedger_InsertManyFastTx() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)

	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	done := make(chan string, 3)
	river.AddWorker(l.Workers(), river.WorkFunc(func(ctx context.Context, job *river.Job[exampleArgs]) error {
		done <- job.Args.Msg
		return nil
	}))
	if err := l.AddQueue(river.QueueDefault, 1); err != nil {
		log.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		log.Fatal(err)
	}

	tx, err := l.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	n, err := l.InsertManyFastTx(ctx, tx, []river.InsertManyParams{
		{Args: exampleArgs{Msg: "a"}}, {Args: exampleArgs{Msg: "b"}}, {Args: exampleArgs{Msg: "c"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, <-done, <-done, <-done)
	if err := l.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: 3 a b c
}
