package telemetry_test

import (
	"testing"

	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

func TestProviderName(t *testing.T) {
	for _, c := range []struct{ typ, url, want string }{
		{"openai", "https://api.openai.com/v1", "openai"},
		{"openai", "https://my-res.openai.azure.com/openai/deployments/x", "azure.ai.openai"},
		{"openai", "https://generativelanguage.googleapis.com/v1beta/openai", "gcp.gemini"},
		{"openai", "https://us-central1-aiplatform.googleapis.com/v1/projects/p", "gcp.vertex_ai"},
		{"openai", "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1", "aws.bedrock"},
		{"openai", "https://s3.amazonaws.com/x", "openai"},
		{"openai", "https://api.groq.com/openai/v1", "groq"},
		{"openai", "https://API.DeepSeek.com", "deepseek"},
		{"openai", "https://api.mistral.ai/v1", "mistral_ai"},
		{"openai", "https://api.x.ai/v1", "x_ai"},
		{"anthropic", "https://api.anthropic.com/v1", "anthropic"},
		{"anthropic", "http://127.0.0.1:9090", "anthropic"},
		{"openai", "http://localhost:8000/v1", "openai"},
		{"", "", "openai"},
		{"vllm", "http://gpu-box:8000/v1", "vllm"},
	} {
		if got := telemetry.ProviderName(c.typ, c.url); got != c.want {
			t.Errorf("ProviderName(%q, %q) = %q; want %q", c.typ, c.url, got, c.want)
		}
	}
}

func TestServerAddress(t *testing.T) {
	for _, c := range []struct {
		url  string
		host string
		port int
	}{
		{"https://api.openai.com/v1", "api.openai.com", 443},
		{"http://primary:9090/v1", "primary", 9090},
		{"http://[::1]:8080", "::1", 8080},
		{"http://host", "host", 80},
		{"not a url", "", 0},
	} {
		if h, p := telemetry.ServerAddress(c.url); h != c.host || p != c.port {
			t.Errorf("ServerAddress(%q) = %q, %d; want %q, %d", c.url, h, p, c.host, c.port)
		}
	}
}
