package webhook

// controlsSQL creates the tables of the delivery controls (run by migrate with the
// others): the rate limiters' state (ratelimit.go).
var controlsSQL = []string{
	`CREATE TABLE IF NOT EXISTS webhook_rate_limits (
		endpoint_id TEXT PRIMARY KEY,
		tat BIGINT NOT NULL
	)`,
}
