package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Lookup resolves an environment variable; os.LookupEnv in the binary, a map in tests,
// so substitution never depends on the test process's environment.
type Lookup func(name string) (string, bool)

// Expand replaces ${VAR} and ${VAR:-default} in s. "$$" is a literal "$"; any other "$"
// is kept as is, so passwords and regexes containing "$" survive. An unset ${VAR} with
// no default is an error (a silent empty string would turn a missing secret into a
// confusing failure far away); ${VAR:-} states "empty is fine".
//
// The syntax is the POSIX shell/Docker Compose one rather than Benthos' ${VAR:default},
// because operators already write it in compose files and .env files.
func Expand(s string, env Lookup) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var errs []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '{':
		default:
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := s[i+2 : i+2+end]
		i += 2 + end
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("invalid variable name %q in ${%s}", name, expr)
		}
		v, ok := env(name)
		switch {
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			errs = append(errs, name)
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} to allow a default)", strings.Join(errs, ", "), errs[0])
	}
	return b.String(), nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expandTree substitutes variables in every scalar value (never in keys) of the tree,
// after parsing, so a value containing ": " or "#" cannot change the document's shape
// and every problem keeps the line and column of the scalar it came from.
func expandTree(file string, n *yaml.Node, env Lookup, isKey bool, ps *Problems) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			expandTree(file, c, env, false, ps)
		}
	case yaml.MappingNode:
		for i, c := range n.Content {
			expandTree(file, c, env, i%2 == 0, ps)
		}
	case yaml.AliasNode:
		// the anchor's node is expanded where it is defined
	case yaml.ScalarNode:
		if isKey || !strings.Contains(n.Value, "$") {
			return
		}
		v, err := Expand(n.Value, env)
		if err != nil {
			*ps = append(*ps, Problem{File: file, Line: n.Line, Col: n.Column, Msg: err.Error()})
			return
		}
		n.Value = v
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) == 0 {
			// A plain scalar is re-resolved after substitution, so `port: ${PORT:-8080}`
			// decodes as the integer it now spells.
			n.Tag = ""
		}
	}
}
