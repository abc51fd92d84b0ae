package registry

import (
	"strings"
	"testing"
)

type fake struct{ id ID }

func (f fake) HubModule() Info {
	return Info{ID: f.id, New: func() Module { return fake{f.id} }}
}

type nilNew struct{}

func (nilNew) HubModule() Info { return Info{ID: "transport.nilnew"} }

func TestRegister(t *testing.T) {
	t.Parallel()
	panics := func(m Module) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg, _ = r.(string)
			}
		}()
		Register(m)
		return ""
	}
	if msg := panics(fake{"transport.test_register_ok"}); msg != "" {
		t.Fatalf("first registration panicked: %s", msg)
	}
	cases := []struct {
		m    Module
		want string
	}{
		{fake{"transport.test_register_ok"}, "already registered"},
		{fake{""}, "ID missing"},
		{fake{"nonsense"}, "unknown namespace"},
		{fake{"output.kafka"}, "unknown namespace"},
		{fake{"transport."}, "empty name"},
		{nilNew{}, "New is nil"},
	}
	for _, c := range cases {
		if msg := panics(c.m); !strings.Contains(msg, c.want) {
			t.Errorf("Register(%v): panic %q, want %q", c.m.HubModule().ID, msg, c.want)
		}
	}
	info, ok := Lookup("transport.test_register_ok")
	if !ok || info.ID.Namespace() != "transport" || info.ID.Name() != "test_register_ok" {
		t.Errorf("Lookup = %+v, %v", info, ok)
	}
	found := false
	for _, n := range Names(NSTransport) {
		found = found || n == "test_register_ok"
	}
	if !found {
		t.Error("Names does not list the module")
	}
}
