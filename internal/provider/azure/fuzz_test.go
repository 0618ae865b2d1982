package azure

import (
	"net/url"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// Whatever the deployment's name, the URL names that deployment and no
// other path, and its query is the api-version alone.
func FuzzDeploymentURL(f *testing.F) {
	for _, s := range []string{"gpt-4o", "a b", "a/b", "..", ".", "x?api-version=1", "x#y", "%2F", "é", "a/../../b", ""} {
		f.Add(s)
	}
	up, err := New(Config{Endpoint: "https://contoso.openai.azure.com/base"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, model string) {
		target, un := up.target(&router.Call{Path: "/chat/completions", Model: model})
		if un != nil {
			if model != "" && model != "." && model != ".." {
				t.Fatalf("%q refused: %v", model, un)
			}
			return
		}
		u, err := url.Parse(target)
		if err != nil {
			t.Fatalf("%q: %s does not parse: %v", model, target, err)
		}
		if u.Path != "/base/openai/deployments/"+model+"/chat/completions" || u.RawQuery != "api-version=2024-10-21" || u.Host != "contoso.openai.azure.com" {
			t.Fatalf("%q: %s", model, target)
		}
	})
}
