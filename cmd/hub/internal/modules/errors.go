package modules

import (
	"bytes"

	"github.com/koder/eventhub/hub"
)

// errPurgeAllOnly: the library purges a whole dead-letter queue; AMQP 0-9-1 cannot
// delete one message in the middle of a queue without consuming the others.
var errPurgeAllOnly = hub.Errorf(hub.InvalidArgument, "this DLQ can only be purged whole: pass all=true (--all)")

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
