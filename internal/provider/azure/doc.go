// Package azure is the adapter for Azure OpenAI: a router.Upstream that
// sends OpenAI-format calls to an Azure OpenAI (or Azure AI Foundry)
// resource's deployments.
//
// # Wire format
//
// Bodies are OpenAI's and go as they are; answers come back as they are.
// The deployments API (Config.APIVersion a dated version, default
// DefaultAPIVersion) names the deployment in the path, the call's Model
// being the deployment's name (path-escaped):
//
//	POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=V
//	POST {endpoint}/openai/deployments/{deployment}/embeddings?api-version=V
//	POST {endpoint}/openai/responses?api-version=V      (Config.Responses)
//	GET  {endpoint}/openai/models?api-version=V         (Probe)
//
// The v1 API (APIVersion "v1") has OpenAI's paths under {endpoint}/openai/v1
// and takes the deployment from the body's model, which the router has
// already set to the target's:
//
//	POST {endpoint}/openai/v1/chat/completions, /embeddings, /responses
//	GET  {endpoint}/openai/v1/models                    (Probe)
//
// These are the paths, queries and headers the official openai-go client
// sends with its azure options (the package's tests compare them).
//
// # Credentials
//
// Without Entra, a call's key goes in the api-key header. With Entra, the
// keys are not sent: a Microsoft Entra ID token goes in Authorization:
// Bearer, from the OAuth 2.0 client credentials flow of
// golang.org/x/oauth2/clientcredentials at
// {authority}/{tenant}/oauth2/v2.0/token, with the client secret or, for
// workload identity, the federated token file's content as the client
// assertion (read again for each token request). A token is requested
// once for all callers, held, and refreshed in the background five
// minutes before it expires (half its life for a short-lived one), never
// per request; a failed token request is a *TokenError for the calls that
// needed it, nothing is sent upstream, and the endpoint is asked again
// after five seconds.
//
// # Errors
//
// A non-2xx answer is returned unchanged — status, headers (Azure's 429
// carries retry-after-ms and retry-after; x-ms-* and apim-request-id
// identify the request) and body, including a content filter's 400 with
// error.code "content_filter" and error.innererror.content_filter_result —
// for aierr to classify. A request that cannot be served is refused with a
// *router.Unservable before anything is sent: a chat request setting a
// field listed in Config.Unsupported, an operation the resource does not
// serve (/responses without Config.Responses, any path other than chat
// completions, embeddings and responses), a deployments-API call with no
// deployment. Transport failures (refused, reset, timed out) are returned
// as errors, as net/http gives them. No error or message holds a key,
// client secret, assertion or token.
package azure
