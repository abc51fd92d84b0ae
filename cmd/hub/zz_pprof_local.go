//go:build e2eprof

package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if a := os.Getenv("HUB_PPROF"); a != "" {
		go func() { _ = http.ListenAndServe(a, nil) }()
	}
}
