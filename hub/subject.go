package hub

import (
	"fmt"

	"github.com/koder/eventhub/cloudevent"
)

// SubjectRequirer is optionally implemented by transports whose wire format cannot
// carry an event without a subject: seed 000's R2 fields make subject_id mandatory and
// non-empty, and a correct R2 consumer dead-letters an entry without one (N2). The
// hub then refuses such events at Publish, before anything is sent, naming the route,
// unless the route supplies a subject (WithDefaultSubject). RequiresSubject must not
// change over the transport's life.
type SubjectRequirer interface {
	RequiresSubject() bool
}

// WithDefaultSubject gives events without a subject the subject s on this route only:
// the transport, the outbox and the failure events of the route see s, while other
// routes and in-process subscribers see the event as published. It is what lets an
// R2 route (SubjectRequirer) accept events that have no natural subject. Empty: none.
func WithDefaultSubject(s string) RouteOption {
	return func(c *routeConfig) { c.defaultSubject = s }
}

// needsSubject reports whether the route refuses ev: the event has no subject, the
// route none to give it, and its transport cannot do without.
func (r *route) needsSubject(ev *cloudevent.Event) bool {
	return ev.Subject == "" && r.cfg.defaultSubject == "" && r.requiresSubject
}

// eventFor is the event as the route delivers it: ev, or a copy with the route's
// default subject when ev has none.
func (r *route) eventFor(ev *cloudevent.Event) *cloudevent.Event {
	if ev.Subject != "" || r.cfg.defaultSubject == "" {
		return ev
	}
	c := ev.Clone()
	c.Subject = r.cfg.defaultSubject
	return c
}

// checkSubjects refuses, with one InvalidArgument *cloudevent.ValidationError listing
// every case, the events that some matching route cannot deliver for want of a
// subject. Problems are on "subject" ("[i].subject" in a batch of several, as batch
// parse errors are), so the ingress answers 400 with the pointer /subject. It costs
// nothing when no route requires a subject.
func checkSubjects(routes []*route, evs []*cloudevent.Event) error {
	var problems []cloudevent.Problem
	for _, r := range routes {
		if !r.requiresSubject || r.cfg.defaultSubject != "" {
			continue
		}
		for i, ev := range evs {
			if !r.needsSubject(ev) || !r.accepts(ev) {
				continue
			}
			field := "subject"
			if len(evs) > 1 {
				field = fmt.Sprintf("[%d].subject", i)
			}
			problems = append(problems, cloudevent.Problem{Field: field, Message: fmt.Sprintf(
				"required by route %q, whose transport cannot carry an event without one (R2: subject_id is mandatory): set the event's subject, or give the route a default subject (WithDefaultSubject; routes[].default_subject in the hub config)",
				r.cfg.name)})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &cloudevent.ValidationError{Problems: problems}
}
