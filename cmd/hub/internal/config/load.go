package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File is a decoded config with what is needed to locate later problems in it.
type File struct {
	Name   string // the file name problems are reported against
	Dir    string // relative paths in the config resolve against it
	Config Config
	dec    *Decoder
}

// Load reads and decodes a config file. Problems lists everything wrong found without
// any module's help; the caller continues with module decoding when it is empty (or
// to collect more problems for lint).
func Load(name string, env Lookup) (*File, Problems) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, Problems{{File: name, Msg: err.Error()}}
	}
	return Parse(name, filepath.Dir(name), data, env)
}

// Parse decodes config text. name labels problems; dir anchors relative paths.
func Parse(name, dir string, data []byte, env Lookup) (*File, Problems) {
	if env == nil {
		env = os.LookupEnv
	}
	f := &File{Name: name, Dir: dir, dec: &Decoder{File: name, Pos: map[string]*yaml.Node{}}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, Problems{syntaxProblem(name, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Problems{{File: name, Line: extra.Line, Col: extra.Column, Msg: "more than one YAML document; the config is one document"}}
	}
	var ps Problems
	expandTree(name, &root, env, false, &ps)
	body := &root
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		body = root.Content[0]
	}
	if root.Kind == 0 || (root.Kind == yaml.DocumentNode && len(root.Content) == 0) {
		body = nil // an empty file is the empty config
	}
	f.dec.Decode(body, "", &f.Config)
	ps = append(ps, f.dec.Problems...)
	f.dec.Problems = nil
	f.Config.setDefaults()
	ps = append(ps, f.validate()...)
	return f, ps.dedupe()
}

// syntaxProblem turns a yaml.v3 syntax error ("yaml: line 3: ...") into a located Problem.
func syntaxProblem(name string, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := Problem{File: name, Msg: msg}
	var line int
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		p.Line, p.Col = line, 1
		p.Msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	return p
}

// Node returns the node decoded at path ("transports.redis", "routes[0].to"), or nil.
func (f *File) Node(path string) *yaml.Node { return f.dec.Pos[path] }

// KeyNode returns the key node of the mapping entry at path, or nil.
func (f *File) KeyNode(path string) *yaml.Node { return f.dec.Pos[path+"#key"] }

// Problem builds a problem located at path's node (its key when the value is absent).
func (f *File) Problem(path, format string, args ...any) Problem {
	p := Problem{File: f.Name, Path: path, Msg: fmt.Sprintf(format, args...)}
	n := f.Node(path)
	if n == nil || n.Line == 0 {
		n = f.KeyNode(path)
	}
	for cut := path; n == nil && cut != ""; {
		// locate an absent key at its parent
		i := strings.LastIndexAny(cut, ".[")
		if i < 0 {
			break
		}
		cut = cut[:i]
		n = f.Node(cut)
	}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	return p
}

// Decoder returns a decoder for module sections that reports against this file.
func (f *File) Decoder() *Decoder { return &Decoder{File: f.Name, Pos: f.dec.Pos} }

// Resolve makes a config-relative path absolute-or-relative to the working directory.
func (f *File) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || f.Dir == "" {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// MentionedKey finds the key of mapping n named earliest in msg as a whole word,
// case-insensitively, with "_" in the key allowed to match a Go field name written
// without it. It returns the key's value node and the key.
func MentionedKey(n *yaml.Node, msg string) (*yaml.Node, string) {
	lower := strings.ToLower(msg)
	best, at := -1, len(lower)+1
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "type" {
			continue
		}
		for _, form := range []string{strings.ToLower(k), strings.ReplaceAll(strings.ToLower(k), "_", "")} {
			if loc := regexp.MustCompile(`\b` + regexp.QuoteMeta(form) + `\b`).FindStringIndex(lower); loc != nil && loc[0] < at {
				best, at = i, loc[0]
			}
		}
	}
	if best < 0 {
		return nil, ""
	}
	return n.Content[best+1], n.Content[best].Value
}
