package anthropic

import "github.com/fuseboxhq/fusebox/internal/jsontext"

// appendString appends s as a JSON string, as encoding/json writes it
// with HTML escaping off.
func appendString(b []byte, s string) []byte { return jsontext.AppendString(b, s) }
