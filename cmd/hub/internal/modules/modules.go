// Package modules holds the hub binary's sources and transports, one small file per
// module, each registering itself in init by its namespaced ID (see package registry).
// Importing this package is what composes the binary; the library packages it wraps
// register nothing themselves.
package modules
