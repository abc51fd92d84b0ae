package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// Do speaks the Redis command set (the differential test drives it against Redis, the
// Redis protocol front serves it).
func ExampleEngine_Do() {
	dir, _ := os.MkdirTemp("", "kdb")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "kdb.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	for _, cmd := range [][]string{
		{"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"},
		{"XADD", "s", "1-1", "k", "v"},
		{"XADD", "s", "1-1", "k", "v"},
		{"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "s", ">"},
		{"XACK", "s", "g", "1-1"},
	} {
		reply, err := e.Do(ctx, cmd...)
		fmt.Println(engine.RESP2(reply), err) // as a RESP2 client decodes it
	}
	// Output:
	// OK <nil>
	// 1-1 <nil>
	// <nil> ERR The ID specified in XADD is equal or smaller than the target stream top item
	// [[s [[1-1 [k v]]]]] <nil>
	// 1 <nil>
}

// Open an engine on SQLite (one file) or PostgreSQL (Driver "postgres", DSN a URL).
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "kdb")
	defer os.RemoveAll(dir)
	e, err := engine.Open(context.Background(), engine.Config{
		Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "kdb.db"), Synchronous: "FULL",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	id, _, _ := e.XAdd(context.Background(), engine.Add{Stream: "s", ID: "5-*", Values: []string{"k", "v"}})
	fmt.Println(id)
	// Output: 5-0
}
