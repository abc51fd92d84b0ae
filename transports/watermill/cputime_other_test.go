//go:build !unix

package watermill

import "time"

// processCPU is not measured on this platform (cpu-ns/op then reads 0).
func processCPU() time.Duration { return 0 }
