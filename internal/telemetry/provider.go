package telemetry

import (
	"net/url"
	"strconv"
	"strings"
)

// hostProviders maps an upstream host's suffix to the GenAI conventions'
// well-known gen_ai.provider.name: OpenAI-compatible hosts are named for
// who serves them, not for the API they speak.
var hostProviders = []struct{ suffix, name string }{
	{"openai.azure.com", "azure.ai.openai"},
	{"services.ai.azure.com", "azure.ai.inference"},
	{"models.ai.azure.com", "azure.ai.inference"},
	{"generativelanguage.googleapis.com", "gcp.gemini"},
	{"aiplatform.googleapis.com", "gcp.vertex_ai"}, // also <region>-aiplatform.googleapis.com
	{"amazonaws.com", "aws.bedrock"},               // bedrock-runtime.<region>.amazonaws.com
	{"api.anthropic.com", "anthropic"},
	{"api.openai.com", "openai"},
	{"api.groq.com", "groq"},
	{"api.deepseek.com", "deepseek"},
	{"api.mistral.ai", "mistral_ai"},
	{"api.x.ai", "x_ai"},
	{"api.perplexity.ai", "perplexity"},
	{"api.cohere.com", "cohere"},
	{"api.cohere.ai", "cohere"},
	{"api.moonshot.ai", "moonshot_ai"},
	{"api.moonshot.cn", "moonshot_ai"},
}

// ProviderName returns the gen_ai.provider.name of an upstream from its
// configured type ("openai", "anthropic", …) and base URL: the well-known
// name of the host when it is one (Azure OpenAI, Gemini, Bedrock, Groq,
// …), else the type. The gateway calls it once per provider, when it
// builds its targets.
func ProviderName(providerType, baseURL string) string {
	host, _ := ServerAddress(baseURL)
	host = strings.ToLower(host)
	for _, hp := range hostProviders {
		if host == hp.suffix || strings.HasSuffix(host, "."+hp.suffix) || strings.HasSuffix(host, "-"+hp.suffix) {
			if hp.name == "aws.bedrock" && !strings.Contains(host, "bedrock") {
				continue
			}
			return hp.name
		}
	}
	if providerType == "" {
		return "openai" // the API every OpenAI-compatible upstream speaks
	}
	return providerType
}

// ServerAddress returns the host and port of an upstream's base URL, for
// server.address and server.port: the URL's port, or 443 for https and 80
// for http; "" and 0 for a URL without a host.
func ServerAddress(baseURL string) (host string, port int) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", 0
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	} else if u.Scheme == "https" {
		port = 443
	} else if u.Scheme == "http" {
		port = 80
	}
	return u.Hostname(), port
}
