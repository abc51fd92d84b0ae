package cloudevent

import "strings"

// mediaType returns the lowercase type/subtype of a Content-Type value, without
// parameters. It does not validate (Validate does, with mime.ParseMediaType): this runs
// on every codec call and must not allocate for the common lowercase case.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	for i := 0; i < len(ct); i++ {
		if c := ct[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(ct)
		}
	}
	return ct
}

// IsJSON reports whether data of content type ct is JSON text: empty (CloudEvents
// JSON format: absent means application/json), application/json, text/json or any
// "+json" suffix type.
func IsJSON(ct string) bool {
	if ct == "" || ct == "application/json" {
		return true
	}
	mt := mediaType(ct)
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json") || mt == ""
}

// isText reports whether ct is a text type whose data is usually UTF-8 text.
func isText(ct string) bool {
	mt := mediaType(ct)
	return strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}
