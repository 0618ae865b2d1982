package vertex

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// AnthropicVersion is the anthropic_version Vertex AI's Claude models take
// in the body.
const AnthropicVersion = "vertex-2023-10-16"

// messagesBody turns a Messages request into the body Vertex AI's
// rawPredict takes: without "model" (the URL names it) or a client's
// anthropic_version, with Vertex's anthropic_version first, and the
// client's anthropic-beta flags as "anthropic_beta" when it sent any and
// the body has none. Keys are matched as a JSON reader matches them,
// escapes decoded, every duplicate removed.
func messagesBody(body []byte, beta []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("the Messages body is not a JSON object")
	}
	out := make([]byte, 0, len(body)+64)
	out = append(out, `{"anthropic_version":"`+AnthropicVersion+`"`...)
	hasBeta := false
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("the Messages body is not valid JSON")
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("the Messages body is not valid JSON")
		}
		switch key {
		case "model", "anthropic_version":
			continue
		case "anthropic_beta":
			hasBeta = true
		}
		member := bytes.TrimLeft(body[start:dec.InputOffset()], " \t\r\n,")
		out = append(out, ',')
		out = append(out, member...)
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("the Messages body is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the Messages body has more after its object")
	}
	if flags := betaFlags(beta); len(flags) > 0 && !hasBeta {
		out = append(out, `,"anthropic_beta":[`...)
		for i, f := range flags {
			if i > 0 {
				out = append(out, ',')
			}
			out = jsontext.AppendString(out, f)
		}
		out = append(out, ']')
	}
	return append(out, '}'), nil
}

// betaFlags splits anthropic-beta header values into flags.
func betaFlags(values []string) []string {
	var flags []string
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				flags = append(flags, f)
			}
		}
	}
	return flags
}
