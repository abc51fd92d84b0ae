package redisstream_test

import (
	"fmt"

	"github.com/koder/eventhub/transports/redisstream"
)

// A Redis Cluster from a seed list: ParseClientURL picks the go-redis client by scheme
// and keeps the hub's own parameters for the transport's Config.
func ExampleParseClientURL() {
	opts, cfg, err := redisstream.ParseClientURL("redis+cluster://r1:7000,r2:7000,r3:7000/?service=id&max_redirects=5", redisstream.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Println(opts.Cluster.Addrs, opts.Cluster.MaxRedirects, cfg.Service)
	// client := opts.NewClient() // a *redis.ClusterClient; redisstream.New(client, cfg)
	// Output: [r1:7000 r2:7000 r3:7000] 5 id
}

// On a cluster a stream's dead-letter stream must share its hash slot: the default
// wraps the stream's name in a hash tag, so R1's stream name stays as it is.
func ExampleClusterDLQStreamFor() {
	for _, s := range []string{"koder:events:id", "orders:{eu}"} {
		dlq := redisstream.ClusterDLQStreamFor(s)
		fmt.Println(dlq, redisstream.KeySlot(s) == redisstream.KeySlot(dlq))
	}
	// Output:
	// {koder:events:id}:dlq true
	// orders:{eu}:dlq true
}
