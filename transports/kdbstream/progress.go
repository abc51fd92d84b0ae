package kdbstream

import (
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"
)

// ProgressBar returns a MigrateOptions.Progress function drawing a terminal progress
// bar on w (entries and pending entries copied of the total). The bar is created at
// the first call, when the total is known.
func ProgressBar(w io.Writer) func(done, total int64) {
	var mu sync.Mutex
	var bar *progressbar.ProgressBar
	return func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if bar == nil {
			bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription("migrating"),
				progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(0),
				progressbar.OptionOnCompletion(func() { _, _ = io.WriteString(w, "\n") }),
			)
		}
		if total != bar.GetMax64() {
			bar.ChangeMax64(total)
		}
		_ = bar.Set64(done)
	}
}
