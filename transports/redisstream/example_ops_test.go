package redisstream_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/transports/redisstream"
)

// After an outage: every dead letter back to its source stream for a new delivery.
func ExampleDLQ_ReplayAll() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	n, err := redisstream.NewDLQ(client, "koder:events:id:dlq").ReplayAll(context.Background())
	fmt.Println("replayed", n)
	if err != nil {
		log.Print(err) // the entries that could not move; the others did
	}
}

// A stream's length and its groups' progress: what a status page or an alert reads.
func ExampleReadStatus() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	st, err := redisstream.ReadStatus(context.Background(), client, "koder:events:id")
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range st.Groups {
		fmt.Println(st.Stream, st.Length, g.Name, g.Pending, g.Lag)
	}
}

// The stream a transport writes (nil under category naming, which writes several).
func ExampleTransport_Status() {
	var tr *redisstream.Transport // from redisstream.Open or New
	st, err := tr.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	if st != nil {
		fmt.Println(st.Stream, st.Length, len(st.Groups))
	}
}
