package config_test

import (
	"fmt"

	"github.com/koder/eventhub/cmd/hub/internal/config"
)

func ExampleExpand() {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"REDIS_HOST": "cache.internal"}[k]
		return v, ok
	}
	s, _ := config.Expand("redis://${REDIS_HOST}:${REDIS_PORT:-6379}/0", env)
	fmt.Println(s)
	_, err := config.Expand("${DATABASE_URL}", env)
	fmt.Println(err)
	// Output:
	// redis://cache.internal:6379/0
	// environment variable DATABASE_URL is not set (write ${DATABASE_URL:-default} to allow a default)
}

func ExampleParse() {
	yaml := "routes:\n  - pattern: 'identity.#'\n    to: redis\n    delivery: soon\n"
	_, problems := config.Parse("hub.yaml", "", []byte(yaml), func(string) (string, bool) { return "", false })
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// hub.yaml:3:9: routes[0].to: unknown transport "redis" (defined: )
	// hub.yaml:4:15: routes[0].delivery: unknown delivery "soon" (direct, outbox)
}
