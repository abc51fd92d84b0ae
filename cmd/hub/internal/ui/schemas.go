package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/schema"
)

type schemaVersion struct {
	Version string
	Major   int
	Raw     string     // pretty JSON
	Props   []property // the top-level properties, readable
	Example string     // an example payload built from the schema
}

type schemaData struct {
	Type     string
	Versions []schemaVersion
	Input    string // the JSON last posted to the validator
	Version  string
	Result   *validation
}

type validation struct {
	OK     bool
	Errors []schema.FieldError
	Other  string
}

func (c *Console) registry(w http.ResponseWriter, r *http.Request) (*schema.Registry, bool) {
	if c.cfg.Schemas == nil {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no schema catalogue is loaded"))
		return nil, false
	}
	return c.cfg.Schemas, true
}

func (c *Console) schemas(w http.ResponseWriter, r *http.Request) {
	reg, ok := c.registry(w, r)
	if !ok {
		return
	}
	c.render(w, r, http.StatusOK, "schemas", &page{Title: "Schemas", Nav: "schemas", Data: reg.Types()})
}

// versionsOf builds the readable form of every registered major version of typ.
func versionsOf(reg *schema.Registry, typ string) ([]schemaVersion, bool) {
	for _, ti := range reg.Types() {
		if ti.Type != typ {
			continue
		}
		var out []schemaVersion
		for _, v := range ti.Versions {
			major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
			raw, ok := reg.Schema(typ, major)
			if !ok {
				continue
			}
			sv := schemaVersion{Version: v, Major: major, Raw: funcs["pretty"].(func([]byte) string)(raw)}
			var doc map[string]any
			if json.Unmarshal(raw, &doc) == nil {
				sv.Props = properties(doc)
				ex, _ := json.MarshalIndent(example(doc, 0), "", "  ")
				sv.Example = string(ex)
			}
			out = append(out, sv)
		}
		return out, true
	}
	return nil, false
}

func (c *Console) schemaPage(w http.ResponseWriter, r *http.Request) {
	c.schemaWith(w, r, http.StatusOK, "", "", nil)
}

func (c *Console) schemaWith(w http.ResponseWriter, r *http.Request, status int, input, version string, res *validation) {
	reg, ok := c.registry(w, r)
	if !ok {
		return
	}
	typ := r.PathValue("type")
	vs, ok := versionsOf(reg, typ)
	if !ok {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no schema for type %s", typ))
		return
	}
	if input == "" && len(vs) > 0 {
		input = vs[len(vs)-1].Example
	}
	c.render(w, r, status, "schema", &page{Title: typ, Nav: "schemas",
		Data: schemaData{Type: typ, Versions: vs, Input: input, Version: version, Result: res}})
}

// validateJSON validates the posted JSON against the type's schema: the library's own
// check (schema.Registry.ValidateData), with its JSON-pointer errors listed.
func (c *Console) validateJSON(w http.ResponseWriter, r *http.Request) {
	reg, ok := c.registry(w, r)
	if !ok {
		return
	}
	input := r.PostFormValue("json")
	version := strings.TrimSpace(r.PostFormValue("version"))
	res := &validation{}
	if !json.Valid([]byte(input)) {
		res.Other = "This is not JSON."
	} else if err := reg.ValidateData(r.PathValue("type"), version, "application/json", []byte(input)); err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) {
			res.Errors = ve.Fields
		} else {
			res.Other = err.Error()
		}
	} else {
		res.OK = true
	}
	c.schemaWith(w, r, http.StatusOK, input, version, res)
}
