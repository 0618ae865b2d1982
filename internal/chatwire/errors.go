package chatwire

import "reflect"

// Codes of the refusals (router.Unservable.Code) and of the OpenAI-shaped
// error bodies the translators write, one vocabulary whichever provider
// refuses. Each adapter re-exports them with its own provider's meaning.
const (
	// CodeUnsupportedParameter names a request field the provider has no
	// equivalent for, which would change the answer if dropped.
	CodeUnsupportedParameter = "unsupported_parameter"
	// CodeUnsupportedValue names a request field whose value the provider
	// cannot honour.
	CodeUnsupportedValue = "unsupported_value"
	// CodeInvalidValue names a request field that cannot be translated
	// because it is malformed.
	CodeInvalidValue = "invalid_value"
	// CodeUnsupportedOperation refuses an operation the provider does not
	// offer through the adapter, such as /embeddings.
	CodeUnsupportedOperation = "unsupported_operation"
	// CodeBadUpstreamResponse is the code of the 502 answer written when a
	// successful upstream answer cannot be read.
	CodeBadUpstreamResponse = "bad_upstream_response"
)

// JSONKind names, with its article, the JSON type a Go type decodes from
// ("an array", "a string"), so that a decode error speaks JSON's words,
// not Go's.
func JSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return JSONKind(t.Elem())
	}
	return "another type"
}
