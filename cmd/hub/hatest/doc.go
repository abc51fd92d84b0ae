// Package hatest holds the multi-replica fault test of the hub binary (TestHA_Replicas):
// three hub processes on one PostgreSQL schema, one Redis consumer group and one
// RabbitMQ queue, with replicas killed and stopped mid-flow. It is behind the build
// tag "ha" (make test-ha) because it runs for minutes and starts its own processes.
package hatest
