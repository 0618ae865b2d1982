// Package vertex is the gateway's adapter for Vertex AI: Google's Gemini
// models and Anthropic's Claude models in one Google Cloud project and
// location, behind Google OAuth, so that a ladder such as "Claude on
// Anthropic → Claude on Vertex → Gemini on Vertex" works.
//
// Wire formats. Each call is a POST under
// {BaseURL}/v1/projects/{Project}/locations/{Location}/publishers/:
//
//   - Gemini models: google/models/{model}:generateContent, or
//     :streamGenerateContent?alt=sse for a stream. The body is the OpenAI
//     chat body translated by package gemini, and the answer is translated
//     back by it (package gemini's doc has both tables).
//   - Claude models (a model name starting "claude", such as
//     claude-sonnet-4-5@20250929): anthropic/models/{model}:rawPredict, or
//     :streamRawPredict. The body is the Anthropic Messages request of
//     anthropic.TranslateChat, without "model" (the URL names it) and with
//     "anthropic_version": "vertex-2023-10-16"; the answer (a message, or
//     Anthropic's event stream) is translated back by anthropic.ChatAnswer
//     and anthropic.ChatStream.
//   - A client's own Messages body (router.Call.Native, for Claude models:
//     SpeaksMessages) goes as the client wrote it, byte for byte, less
//     every "model" and "anthropic_version" member (escaped and repeated
//     keys included), with Vertex's anthropic_version first and the
//     client's anthropic-beta header as "anthropic_beta" when the body has
//     none. Its answer is returned as Anthropic sent it. A native
//     count_tokens call goes to anthropic/models/count-tokens:rawPredict
//     with its body as it is.
//
// Every request carries Authorization: Bearer <token>, content-type,
// accept, Config.Header, and x-goog-user-project when the credentials name
// a quota project. Tokens come from the credentials (Config):
// given ones, a credentials file or its JSON (service account keys — whose
// token_uri is used — gcloud user credentials, workload identity
// federation, impersonation), else Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server on
// GCE, GKE and Cloud Run, GCE_METADATA_HOST honoured). cloud.google.com/go/auth
// caches the token: it is fetched by the first request (concurrent first
// requests wait for that one fetch), renewed in the background once it is
// within minutes of expiry while requests go on with it, and fetched again
// in line only when it has expired.
//
// Errors. A non-2xx answer is returned unchanged (status, headers, body:
// Google's {"error":{"code","message","status","details"}} or Anthropic's
// error shape) for aierr to classify; a 401 UNAUTHENTICATED is an auth
// verdict. A 2xx answer that cannot be read becomes a 502 in OpenAI's
// shape (code bad_upstream_response). A request that cannot be translated
// faithfully, a model name that is not one URL path segment, a Messages
// body for a Gemini model, and any path but /chat/completions (the native
// count_tokens aside) are refused with a *router.Unservable before
// anything is sent. When no token can be had, Send returns an error and
// sends nothing: "vertex: getting an access token: " and the token
// endpoint's status and OAuth error code, or the transport's failure
// (a cancelled context stays matchable with errors.Is) — never the
// endpoint's answer, the signed assertion or a token.
package vertex
