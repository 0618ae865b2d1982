package gateway

import (
	"net/http"
	"time"

	"github.com/fuseboxhq/fusebox/internal/apierror"
)

// writeError is the one place that writes an error answer in OpenAI's
// shape.
func writeError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	apierror.Write(w, status, typ, code, param, msg)
}

// retryAfter formats a wait as whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string { return apierror.RetryAfter(d) }
