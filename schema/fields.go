package schema

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders jsonschema's messages; the library needs one and panics on nil.
var printer = message.NewPrinter(language.English)

// collect flattens jsonschema's error tree into one FieldError per failing leaf. A
// missing required property is reported at the property's own pointer ("/user_id"),
// which is where a producer looks for it, rather than at its parent object.
func collect(ve *jsonschema.ValidationError, out *[]FieldError) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, out)
		}
		return
	}
	ptr := pointer(ve.InstanceLocation)
	if req, ok := ve.ErrorKind.(*kind.Required); ok {
		for _, name := range req.Missing {
			*out = append(*out, FieldError{Pointer: ptr + "/" + escape(name), Message: "is required"})
		}
		return
	}
	msg := strings.TrimSpace(ve.ErrorKind.LocalizedString(printer))
	*out = append(*out, FieldError{Pointer: ptr, Message: msg})
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

// escape applies RFC 6901: "~" becomes "~0" and "/" becomes "~1".
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
