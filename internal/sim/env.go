package sim

import (
	"net/url"
	"strings"
)

// ClientEnv returns the environment variables (NAME=value, sorted by
// name) that point the clouds' own libraries at a Server reachable at
// baseURL ("http://127.0.0.1:9090"): the AWS SDKs' Bedrock runtime and
// STS endpoints and container credentials endpoint, the Gen AI SDKs'
// Gemini and Vertex base URLs, the GCE metadata host for Google's auth
// libraries, and AZURE_OPENAI_ENDPOINT. Credentials of one's own (an
// API key, AWS_ROLE_ARN with a web identity token file, a service
// account file whose token_uri is baseURL+"/token") come on top.
func ClientEnv(baseURL string) []string {
	base := strings.TrimSuffix(baseURL, "/")
	host := base
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		host = u.Host
	}
	return []string{
		"AWS_CONTAINER_CREDENTIALS_FULL_URI=" + base + "/v2/credentials/sim",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME=" + base,
		"AWS_ENDPOINT_URL_STS=" + base,
		"AZURE_OPENAI_ENDPOINT=" + base,
		"GCE_METADATA_HOST=" + host,
		"GOOGLE_GEMINI_BASE_URL=" + base,
		"GOOGLE_VERTEX_BASE_URL=" + base,
	}
}
