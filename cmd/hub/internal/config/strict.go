package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Decoder decodes YAML nodes into Go values strictly: an unknown key, a value of the
// wrong shape or a malformed duration is a Problem at the exact line and column, and
// every problem in the node is reported, not just the first.
//
// yaml.v3 offers KnownFields only on a Decoder reading bytes, not on Node.Decode, and
// its type errors carry a line but no column or path; walking the node against the
// target type ourselves gives all three, and then Node.Decode does the real work.
type Decoder struct {
	File     string
	Problems Problems
	// Pos maps every path the decoder visited to its node, so later checks (route
	// targets, module Validate errors) can point at the right line.
	Pos map[string]*yaml.Node
}

// Decode checks n against out's type, then decodes it. path prefixes every problem.
// It reports whether the node was clean (out is only filled when it was).
func (d *Decoder) Decode(n *yaml.Node, path string, out any) bool {
	before := len(d.Problems)
	d.check(n, path, reflect.TypeOf(out).Elem())
	if n == nil || n.Kind == 0 {
		return len(d.Problems) == before
	}
	// Decode even after problems: yaml.v3 fills what it can, so later checks still see
	// most of the config and lint reports their problems too.
	err := n.Decode(out)
	if len(d.Problems) > before {
		return false
	}
	if err != nil {
		d.add(n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return false
	}
	return true
}

// Add records a problem at the node's position.
func (d *Decoder) add(n *yaml.Node, path, format string, args ...any) {
	p := Problem{File: d.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.Problems = append(d.Problems, p)
}

// Addf is add for callers outside the package (module Validate errors, route checks).
func (d *Decoder) Addf(n *yaml.Node, path, format string, args ...any) {
	d.add(n, path, format, args...)
}

var (
	durationType    = reflect.TypeOf(time.Duration(0))
	stringListType  = reflect.TypeOf(StringList(nil))
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func (d *Decoder) check(n *yaml.Node, path string, t reflect.Type) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}
	if d.Pos == nil {
		d.Pos = map[string]*yaml.Node{}
	}
	d.Pos[path] = n
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // an empty value leaves the default
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == stringListType && n.Kind == yaml.SequenceNode {
		for i, c := range n.Content {
			d.Pos[fmt.Sprintf("%s[%d]", path, i)] = c
		}
	}
	// Types that decode themselves are checked by their own UnmarshalYAML.
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		var v = reflect.New(t)
		if err := n.Decode(v.Interface()); err != nil {
			d.add(n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return
	}
	if t == durationType {
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, "expected a duration string such as \"5s\", got a %s", kindName(n))
			return
		}
		if n.ShortTag() != "!!str" {
			d.add(n, path, "duration %s needs a unit, e.g. \"%ss\"", n.Value, n.Value)
			return
		}
		if _, err := time.ParseDuration(n.Value); err != nil {
			d.add(n, path, "invalid duration %q (use e.g. \"500ms\", \"5s\", \"1m\")", n.Value)
		}
		return
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, "expected a scalar, got a %s", kindName(n))
			return
		}
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			d.add(n, path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.add(n, path, "expected a mapping, got a %s", kindName(n))
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			d.Pos[join(path, k.Value)+"#key"] = k
			f, ok := fields[k.Value]
			if !ok {
				known := sortedKeys(fields)
				d.add(k, join(path, k.Value), "unknown key %q%s (known keys: %s)", k.Value, DidYouMean(k.Value, known), strings.Join(known, ", "))
				continue
			}
			d.check(v, join(path, k.Value), f)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.add(n, path, "expected a mapping, got a %s", kindName(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			d.checkScalar(k, join(path, k.Value), t.Key())
			d.Pos[join(path, k.Value)+"#key"] = k
			d.check(v, join(path, k.Value), t.Elem())
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && n.Kind == yaml.ScalarNode {
			return // []byte from a string
		}
		if n.Kind != yaml.SequenceNode {
			d.add(n, path, "expected a list, got a %s", kindName(n))
			return
		}
		for i, c := range n.Content {
			d.check(c, fmt.Sprintf("%s[%d]", path, i), t.Elem())
		}
	case reflect.Interface:
		// any value is acceptable
	default:
		d.checkScalar(n, path, t)
	}
}

func (d *Decoder) checkScalar(n *yaml.Node, path string, t reflect.Type) {
	if n.Kind != yaml.ScalarNode {
		d.add(n, path, "expected a %s, got a %s", t.Kind(), kindName(n))
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		d.add(n, path, "cannot use %q as a %s", n.Value, t.Kind())
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar " + fmt.Sprintf("%q", n.Value)
	}
	return "node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct t (inline structs flattened, "-" skipped,
// unexported fields ignored, untagged fields lowercased as yaml.v3 does) to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// Keys lists the YAML keys a struct value accepts (what strict decoding allows), with
// the Go type of each, sorted: `hub modules --keys` prints them.
func Keys(v any) [][2]string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	fs := yamlFields(t)
	out := make([][2]string, 0, len(fs))
	for k, ft := range fs {
		out = append(out, [2]string{k, typeName(ft)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Kind() == reflect.Slice:
		return "[" + typeName(t.Elem()) + "]"
	case t.Kind() == reflect.Struct:
		return "mapping"
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int32 || t.Kind() == reflect.Int64:
		return "int"
	case t.Kind() == reflect.Float64:
		return "float"
	}
	return t.Kind().String()
}
