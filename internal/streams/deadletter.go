package streams

import "errors"

// ErrNoGroup is what a Backend's ReadGroup returns (wrapped, for errors.Is) when the
// stream or the group no longer exists: typically a Redis restarted without
// persistence. The consumer then re-creates the group from "0", because every entry
// of a stream re-created after the loss is one this group has not seen. Returning it
// is optional; a backend that never loses groups need not.
var ErrNoGroup = errors.New("streams: stream or consumer group does not exist")
