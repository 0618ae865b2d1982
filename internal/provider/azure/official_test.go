package azure

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The table officialRequests is what the official client sends: this
// test holds it to the client itself.
func TestOfficialClientRequests(t *testing.T) {
	rec, srv := newRecorder(t)
	for _, tc := range officialRequests {
		c := openai.NewClient(azure.WithEndpoint(srv.URL, tc.version), azure.WithAPIKey("key-1"),
			azure.WithUnsafeAllowHTTP(), option.WithMaxRetries(0))
		var err error
		switch tc.op {
		case "/chat/completions":
			_, err = c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
				Model: tc.deployment, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		case "/embeddings":
			_, err = c.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
				Model: tc.deployment, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
		case "/responses":
			_, err = c.Responses.New(t.Context(), responses.ResponseNewParams{
				Model: tc.deployment, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		case "models":
			_, err = c.Models.List(t.Context())
		}
		if err != nil {
			t.Logf("%s: %v (the fake's answer need not parse)", tc.name, err)
		}
		r, _ := rec.last(t)
		if r.Method != tc.method || r.RequestURI != tc.uri {
			t.Errorf("%s: the official client sent %s %s; the table says %s %s", tc.name, r.Method, r.RequestURI, tc.method, tc.uri)
		}
		if got := r.Header.Values("Api-Key"); len(got) != 1 || got[0] != "key-1" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: the official client sent Api-Key %q, Authorization %q", tc.name, got, r.Header.Get("Authorization"))
		}
	}
}
