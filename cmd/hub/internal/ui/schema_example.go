package ui

import (
	"fmt"
	"sort"
	"strings"
)

// A readable view of a JSON Schema: its top-level properties as rows, and an example
// payload built from it. The example follows what the schema says (const, enum,
// examples, default, format, type) and is only a starting point for the validator box:
// the registry's validation, not this sketch, decides what is valid.

type property struct {
	Name        string
	Type        string
	Required    bool
	Description string
	Constraints string
}

func properties(doc map[string]any) []property {
	props, _ := doc["properties"].(map[string]any)
	req := map[string]bool{}
	if rs, ok := doc["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	out := make([]property, 0, len(props))
	for name, v := range props {
		p, _ := v.(map[string]any)
		out = append(out, property{Name: name, Type: typeOf(p), Required: req[name], Description: str(p["description"]), Constraints: constraints(p)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func typeOf(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok && typeOf(items) != "" {
				return "array of " + typeOf(items)
			}
		}
		return t
	case []any:
		var parts []string
		for _, x := range t {
			parts = append(parts, str(x))
		}
		return strings.Join(parts, " | ")
	}
	if _, ok := p["enum"]; ok {
		return "enum"
	}
	if _, ok := p["const"]; ok {
		return "const"
	}
	return ""
}

func constraints(p map[string]any) string {
	var parts []string
	for _, k := range []string{"format", "pattern", "minLength", "maxLength", "minimum", "maximum", "const"} {
		if v, ok := p[k]; ok {
			parts = append(parts, k+": "+str(v))
		}
	}
	if e, ok := p["enum"].([]any); ok {
		var vs []string
		for _, x := range e {
			vs = append(vs, str(x))
		}
		parts = append(parts, "one of: "+strings.Join(vs, ", "))
	}
	return strings.Join(parts, "; ")
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// example builds a value for schema s (depth bounds recursion).
func example(s map[string]any, depth int) any {
	if depth > 6 || s == nil {
		return nil
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	if v, ok := s["default"]; ok {
		return v
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" {
		if _, ok := s["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, v := range props {
			p, _ := v.(map[string]any)
			out[name] = example(p, depth+1)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		return []any{example(items, depth+1)}
	case "integer":
		return 1
	case "number":
		return 1.5
	case "boolean":
		return true
	case "null":
		return nil
	case "string":
		switch s["format"] {
		case "date-time":
			return "2026-01-01T00:00:00Z"
		case "date":
			return "2026-01-01"
		case "email":
			return "user@example.com"
		case "uri":
			return "https://example.com/"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		case "ipv4":
			return "192.0.2.1"
		case "ipv6":
			return "2001:db8::1"
		}
		return "string"
	}
	return nil
}
