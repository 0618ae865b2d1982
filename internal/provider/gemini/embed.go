package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
)

// MaxEmbedInputs is the most inputs one embeddings request may hold: what
// batchEmbedContents takes in one call.
const MaxEmbedInputs = 100

// embedRequest is a translated OpenAI embeddings request.
type embedRequest struct {
	body   []byte // the batchEmbedContents body
	model  string
	inputs int
	chars  int  // bytes of input text, for the token estimate
	b64    bool // encoding_format base64
}

type batchEmbed struct {
	Requests []embedContent `json:"requests"`
}

type embedContent struct {
	Model                string  `json:"model"`
	Content              content `json:"content"`
	OutputDimensionality int     `json:"outputDimensionality,omitempty"`
}

// translateEmbed turns an OpenAI embeddings body into a
// batchEmbedContents body for model (the URL's).
func translateEmbed(body []byte, fallback string) (embedRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return embedRequest{}, refusal("", CodeInvalidValue, "the request body is not a JSON object: "+jsonProblem(err))
	}
	var in struct {
		Model, EncodingFormat string
		Input                 json.RawMessage
		Dimensions            *int
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[k]
		var err error
		switch k {
		case "model":
			err = decode(k, raw, &in.Model)
		case "input":
			in.Input = raw
		case "dimensions":
			err = decode(k, raw, &in.Dimensions)
		case "encoding_format":
			err = decode(k, raw, &in.EncodingFormat)
		case "user":
		default:
			err = unsupported(k, "")
		}
		if err != nil {
			return embedRequest{}, err
		}
	}
	texts, err := embedInputs(in.Input)
	if err != nil {
		return embedRequest{}, err
	}
	model, err := ModelSegment(in.Model, fallback)
	if err != nil {
		return embedRequest{}, err
	}
	r := embedRequest{model: model, inputs: len(texts)}
	switch in.EncodingFormat {
	case "", "float":
	case "base64":
		r.b64 = true
	default:
		return embedRequest{}, badValue("encoding_format", CodeUnsupportedValue, "want float or base64, got "+shown(in.EncodingFormat))
	}
	dims := 0
	if in.Dimensions != nil {
		if dims = *in.Dimensions; dims < 1 {
			return embedRequest{}, badValue("dimensions", CodeInvalidValue, "must be at least 1")
		}
	}
	req := batchEmbed{Requests: make([]embedContent, len(texts))}
	for i, s := range texts {
		r.chars += len(s)
		req.Requests[i] = embedContent{Model: "models/" + model, Content: content{Role: "user", Parts: []part{{Text: s}}}, OutputDimensionality: dims}
	}
	if r.body, err = json.Marshal(&req); err != nil {
		return embedRequest{}, refusal("", CodeInvalidValue, err.Error())
	}
	return r, nil
}

// embedInputs reads input: a string or an array of strings; token arrays
// are refused, as Gemini embeds text.
func embedInputs(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, badValue("input", CodeInvalidValue, "is required")
	}
	if raw[0] == '"' {
		var s string
		if err := decode("input", raw, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badValue("input", CodeUnsupportedValue, "Gemini embeds text: want a string or an array of strings")
	}
	switch {
	case len(many) == 0:
		return nil, badValue("input", CodeInvalidValue, "is empty")
	case len(many) > MaxEmbedInputs:
		return nil, badValue("input", CodeUnsupportedValue, "Gemini embeds at most "+strconv.Itoa(MaxEmbedInputs)+" inputs per request")
	}
	return many, nil
}

// embedAnswer replaces a successful batchEmbedContents answer with OpenAI's
// embeddings list. Gemini reports no token count for embeddings: usage is
// an estimate, a token per 4 bytes of input, so the call is not free. An
// unreadable answer is a 502.
func embedAnswer(resp *http.Response, r *embedRequest) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxAnswer)+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("gemini: reading the answer: %w", err)
	}
	var out []byte
	if len(body) > maxAnswer {
		err = errors.New("the answer is over " + strconv.Itoa(maxAnswer) + " bytes")
	} else {
		out, err = translateEmbeddings(body, r)
	}
	if err != nil {
		bad := errorResponse(resp.Request, http.StatusBadGateway, "server_error", CodeBadUpstreamResponse,
			"gemini: unreadable embeddings from Gemini: "+err.Error())
		copyHeaders(bad.Header, resp.Header)
		return bad, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

func translateEmbeddings(body []byte, r *embedRequest) ([]byte, error) {
	var a struct {
		Embeddings []struct {
			Values []float64 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, errors.New("not a batchEmbedContents answer: " + jsonProblem(err))
	}
	if len(a.Embeddings) != r.inputs {
		return nil, errors.New(strconv.Itoa(len(a.Embeddings)) + " embeddings for " + strconv.Itoa(r.inputs) + " inputs")
	}
	b := make([]byte, 0, 64+len(body))
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, e := range a.Embeddings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if r.b64 {
			raw = raw[:0]
			for _, v := range e.Values {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, v := range e.Values {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	tokens := int64((r.chars + 3) / 4)
	b = append(b, `],"model":`...)
	b = appendString(b, r.model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, tokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, tokens, 10)
	return append(b, "}}"...), nil
}
