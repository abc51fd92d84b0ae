// Package schema is the hub's JSON Schema registry (V1, E2, E5): payload schemas keyed by
// event type and MAJOR version, validated with santhosh-tekuri/jsonschema/v6.
//
// Schemas are compiled when defined, never at validate time, and the compiler has no URL
// loader: a schema that references anything outside the registry fails at Define instead
// of doing network or file I/O on the publish path.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/koder/eventhub/cloudevent"
)

// Registry holds compiled schemas. It is safe for concurrent use; Define may run while
// events are validated.
type Registry struct {
	mu     sync.RWMutex
	types  map[string]*typeEntry
	strict bool
}

type typeEntry struct {
	majors map[int]*entry
}

type entry struct {
	schema  *jsonschema.Schema
	raw     []byte
	version string // the newest MAJOR.MINOR.PATCH known for this major
	builtin bool
}

// TypeInfo describes one registered type for listings (`hub schema list`).
type TypeInfo struct {
	Type     string   `json:"type"`
	Versions []string `json:"versions"` // newest version per MAJOR, ascending
	Builtin  bool     `json:"builtin"`
}

// NewRegistry returns an empty registry. Events of types without a schema pass
// validation unless the registry is strict (SetStrict).
func NewRegistry() *Registry { return &Registry{types: map[string]*typeEntry{}} }

// SetStrict makes Validate reject events whose type has no schema: for deployments that
// want every published type declared.
func (r *Registry) SetStrict(strict bool) {
	r.mu.Lock()
	r.strict = strict
	r.mu.Unlock()
}

// Define registers the schema for MAJOR version major of typ, replacing any previous one.
// The schema may carry "x-version": "MAJOR.MINOR.PATCH" (its MAJOR must equal major);
// otherwise the version is "<major>.0.0".
func (r *Registry) Define(typ string, major int, schemaJSON []byte) error {
	return r.define(typ, major, schemaJSON, false)
}

var typeRE = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

func (r *Registry) define(typ string, major int, schemaJSON []byte, builtin bool) error {
	if !typeRE.MatchString(typ) {
		return fmt.Errorf("schema: type %q: want dot-separated words", typ)
	}
	if major < 0 {
		return fmt.Errorf("schema: %s: major version %d is negative", typ, major)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return fmt.Errorf("schema: %s v%d: not JSON: %w", typ, major, err)
	}
	version := strconv.Itoa(major) + ".0.0"
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m["x-version"].(string); ok {
			vm, err := parseMajor(v)
			if err != nil || vm != major {
				return fmt.Errorf("schema: %s v%d: x-version %q does not match major %d", typ, major, v, major)
			}
			version = v
		}
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no I/O: refs outside the document fail here
	url := "mem:///" + typ + "/v" + strconv.Itoa(major) + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("schema: %s v%d: %w", typ, major, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return fmt.Errorf("schema: %s v%d: %w", typ, major, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	te := r.types[typ]
	if te == nil {
		te = &typeEntry{majors: map[int]*entry{}}
		r.types[typ] = te
	}
	te.majors[major] = &entry{schema: sch, raw: bytes.Clone(schemaJSON), version: version, builtin: builtin}
	return nil
}

// LoadFS defines every file named `<type>.v<major>.json` under dir of fsys: how the
// built-in catalogue and a deployment's extra schema directory are loaded.
func (r *Registry) LoadFS(fsys fs.FS, dir string) error {
	return r.loadFS(fsys, dir, false)
}

var fileRE = regexp.MustCompile(`^(.+)\.v([0-9]+)\.json$`)

func (r *Registry) loadFS(fsys fs.FS, dir string, builtin bool) error {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	var errs []string
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		m := fileRE.FindStringSubmatch(de.Name())
		if m == nil {
			errs = append(errs, fmt.Sprintf("%s: want <type>.v<major>.json", de.Name()))
			continue
		}
		major, _ := strconv.Atoi(m[2])
		b, err := fs.ReadFile(fsys, path.Join(dir, de.Name()))
		if err == nil {
			err = r.define(m[1], major, b, builtin)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("schema: loading %s:\n  %s", dir, strings.Join(errs, "\n  "))
	}
	return nil
}

// lookup returns the entry for the event's MAJOR version. A missing dataversion selects
// the newest major, so producers that predate versioning keep working.
func (r *Registry) lookup(typ, version string) (*entry, error) {
	r.mu.RLock()
	te := r.types[typ]
	r.mu.RUnlock()
	if te == nil {
		return nil, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if version == "" {
		return te.majors[maxKey(te.majors)], nil
	}
	major, err := parseMajor(version)
	if err != nil {
		return nil, &VersionError{Type: typ, Version: version, Known: sortedKeys(te.majors), Reason: err.Error()}
	}
	e := te.majors[major]
	if e == nil {
		return nil, &VersionError{Type: typ, Version: version, Known: sortedKeys(te.majors), Reason: "unknown MAJOR version"}
	}
	return e, nil
}

// CheckVersion is the consumer-side gate of E5: it accepts an event whose dataversion is
// absent, or semver with a MAJOR registered for its type, or whose type the registry does
// not know; otherwise it returns a *VersionError (errors.Is ErrUnknownMajor).
func (r *Registry) CheckVersion(ev *cloudevent.Event) error {
	_, err := r.lookup(ev.Type, ev.DataVersion())
	return err
}

// Latest returns the newest version registered for typ, for stamping dataversion on new
// events.
func (r *Registry) Latest(typ string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	te := r.types[typ]
	if te == nil {
		return "", false
	}
	return te.majors[maxKey(te.majors)].version, true
}

// Validate checks the event's data against the schema of its type and MAJOR version (V1).
// It returns a *ValidationError listing every failing field, a *VersionError for an
// unknown MAJOR, or nil when the type has no schema and the registry is not strict.
func (r *Registry) Validate(ev *cloudevent.Event) error {
	return r.ValidateData(ev.Type, ev.DataVersion(), ev.DataContentType, ev.Data)
}

// ValidateData is Validate on raw parts, for `hub schema check` and ingress previews.
func (r *Registry) ValidateData(typ, version, contentType string, data []byte) error {
	e, err := r.lookup(typ, version)
	if err != nil {
		return err
	}
	if e == nil {
		r.mu.RLock()
		strict := r.strict
		r.mu.RUnlock()
		if strict {
			return &ValidationError{Code: CodeInvalidEventData, Type: typ, Version: version,
				Fields: []FieldError{{Message: "no schema is registered for this type"}}}
		}
		return nil
	}
	fail := func(msg string) error {
		return &ValidationError{Code: CodeInvalidEventData, Type: typ, Version: e.version, Fields: []FieldError{{Message: msg}}}
	}
	if !isJSON(contentType) {
		return fail(fmt.Sprintf("datacontenttype %q is not JSON, but %s has a JSON Schema", contentType, typ))
	}
	if len(data) == 0 {
		return fail("data is missing")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fail("data is not valid JSON: " + err.Error())
	}
	verr := e.schema.Validate(inst)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return fail(verr.Error())
	}
	out := &ValidationError{Code: CodeInvalidEventData, Type: typ, Version: e.version}
	collect(ve, &out.Fields)
	sort.SliceStable(out.Fields, func(i, j int) bool { return out.Fields[i].Pointer < out.Fields[j].Pointer })
	return out
}

func isJSON(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// Types lists the registered types, sorted by name.
func (r *Registry) Types() []TypeInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]TypeInfo, 0, len(r.types))
	for t, te := range r.types {
		ti := TypeInfo{Type: t}
		for _, m := range sortedKeys(te.majors) {
			ti.Versions = append(ti.Versions, te.majors[m].version)
			ti.Builtin = ti.Builtin || te.majors[m].builtin
		}
		out = append(out, ti)
	}
	slices.SortFunc(out, func(a, b TypeInfo) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// Schema returns the JSON text of a registered schema.
func (r *Registry) Schema(typ string, major int) (json.RawMessage, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if te := r.types[typ]; te != nil {
		if e := te.majors[major]; e != nil {
			return bytes.Clone(e.raw), true
		}
	}
	return nil, false
}

func sortedKeys(m map[int]*entry) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func maxKey(m map[int]*entry) int {
	best := -1
	for k := range m {
		best = max(best, k)
	}
	return best
}
