package bedrock

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// AnthropicVersion is the "anthropic_version" of every Claude body sent to
// InvokeModel.
const AnthropicVersion = "bedrock-2023-05-31"

// member is one top-level member of a JSON object, its key decoded.
type member struct {
	key string
	raw json.RawMessage
}

// invokeBody turns a Messages body into InvokeModel's: "model" and
// "stream" removed (the URL says both), "anthropic_version" set, and the
// anthropic-beta flags (betas, then the body's own "anthropic_beta") as
// "anthropic_beta". "metadata" (a user ID for Anthropic's abuse checks)
// goes too: Bedrock refuses the key, and the answer means the same
// without it. Keys are read decoded, as Bedrock reads them: an
// escaped "str\u0065am" is "stream"; of a repeated key the last value is
// kept, as encoding/json and the gateway's reading keep it. Case variants
// of the removed keys ("Model") go too, so that no reader can see one.
func invokeBody(body []byte, betas []string) ([]byte, error) {
	members, err := topLevel(body)
	if err != nil {
		return nil, refuse("messages", CodeInvalidValue, "the body is not a JSON object: "+err.Error())
	}
	out := make([]byte, 0, len(body)+64)
	out = append(out, `{"anthropic_version":"`+AnthropicVersion+`"`...)
	for i, m := range members {
		switch {
		case m.key == "anthropic_beta":
			var own []string
			if err := json.Unmarshal(m.raw, &own); err != nil {
				return nil, refuse("anthropic_beta", CodeInvalidValue, "want an array of strings")
			}
			betas = splitBeta(append([]string(nil), betas...), own)
			continue
		case strings.EqualFold(m.key, "model"), strings.EqualFold(m.key, "stream"),
			strings.EqualFold(m.key, "anthropic_version"), strings.EqualFold(m.key, "anthropic_beta"),
			strings.EqualFold(m.key, "metadata"):
			continue
		case repeatedLater(members[i+1:], m.key):
			continue
		}
		out = append(out, ',')
		out = jsontext.AppendString(out, m.key)
		out = append(out, ':')
		out = append(out, m.raw...)
	}
	if len(betas) > 0 {
		out = append(out, `,"anthropic_beta":[`...)
		for i, b := range betas {
			if i > 0 {
				out = append(out, ',')
			}
			out = jsontext.AppendString(out, b)
		}
		out = append(out, ']')
	}
	return append(out, '}'), nil
}

func repeatedLater(rest []member, key string) bool {
	for _, m := range rest {
		if m.key == key {
			return true
		}
	}
	return false
}

// topLevel reads the members of a JSON object, in order, with their keys
// decoded.
func topLevel(body []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	members := make([]member, 0, 12)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		members = append(members, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return members, nil
}

type jsonError string

func (e jsonError) Error() string { return string(e) }

const (
	errNotObject = jsonError("want a JSON object")
	errTrailing  = jsonError("data after the JSON object")
)
