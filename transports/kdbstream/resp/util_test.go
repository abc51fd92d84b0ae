package resp

import (
	"log/slog"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
