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

type exampleArgs struct {
	Msg string `json:"msg"`
}

func (exampleArgs) Kind() string { return "example" }

// Open a ledger on an embedded SQLite file, register a worker and a queue, start it and
// insert a job in a transaction of the caller.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)

	l, err := ledger.Open(ctx, ledger.Config{DSN: "sqlite://" + filepath.Join(dir, "hub.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	done := make(chan string, 1)
	river.AddWorker(l.Workers(), river.WorkFunc(func(ctx context.Context, job *river.Job[exampleArgs]) error {
		done <- job.Args.Msg
		return nil
	}))
	if err := l.AddQueue(river.QueueDefault, 10); err != nil {
		log.Fatal(err)
	}
	if err := l.Start(ctx); err != nil {
		log.Fatal(err)
	}
	// The worker id River records in the jobs this process runs; a restart gets a
	// new one, which is how the others can prove this one's jobs orphaned.
	fmt.Println(l.WorkerID() != "")

	tx, err := l.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := l.InsertTx(ctx, tx, exampleArgs{Msg: "hello"}, nil); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	if err := l.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// true
	// hello
}
