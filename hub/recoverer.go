package hub

import (
	"runtime/debug"

	"github.com/ThreeDotsLabs/watermill/message"
)

// recovererMiddleware turns a panic below it (a transport's Send) into an Internal
// error carrying the stack. Watermill's own middleware.Recoverer does the same but
// returns an uncoded error, which IsRetryable would read as Unknown; this one states
// the code.
func recovererMiddleware(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) (out []*message.Message, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = Errorf(Internal, "hub: transport panicked: %v\n%s", p, debug.Stack())
			}
		}()
		return h(msg)
	}
}
