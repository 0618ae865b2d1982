package config

import (
	"strconv"
	"strings"
)

// cloudFields are the provider fields that only some types read, with the
// types that read them.
var cloudFields = []struct {
	name  string
	types []ProviderType
	set   func(p Provider) bool
}{
	{"region", []ProviderType{TypeBedrock, TypeVertex}, func(p Provider) bool { return p.Region != "" }},
	{"project", []ProviderType{TypeVertex}, func(p Provider) bool { return p.Project != "" }},
	{"credentials_file", []ProviderType{TypeVertex}, func(p Provider) bool { return p.CredentialsFile != "" }},
	{"aws", []ProviderType{TypeBedrock}, func(p Provider) bool { return p.AWS != AWSCredentials{} }},
	{"api_version", []ProviderType{TypeAzure}, func(p Provider) bool { return p.APIVersion != "" }},
	{"entra", []ProviderType{TypeAzure}, func(p Provider) bool { return p.Entra != Entra{} }},
}

// checkCloud checks what a cloud provider needs to reach its cloud: a
// region, a project, a credential, an endpoint; and that no field of
// another type's is set, where it would be ignored.
func checkCloud(r *report, path string, p Provider) {
	for _, f := range cloudFields {
		if f.set(p) && !containsType(f.types, p.Type) {
			r.field(path+"."+f.name, f.name+" is read by "+joinTypes(f.types)+" providers only, not by type "+string(p.Type))
		}
	}
	switch p.Type {
	case TypeBedrock:
		checkBedrock(r, path, p)
	case TypeVertex:
		checkVertex(r, path, p)
	case TypeGemini:
		if len(p.Keys) == 0 {
			r.field(path+".keys", "Google AI Studio needs an API key: keys: [\"${GEMINI_API_KEY}\"] (for Google Cloud credentials, use type: vertex)")
		}
	case TypeAzure:
		checkAzure(r, path, p)
	}
}

func checkBedrock(r *report, path string, p Provider) {
	if p.Region == "" {
		r.field(path+".region", "a bedrock provider needs its AWS region, e.g. region: us-east-1 (or region: ${AWS_REGION})")
	}
	a := p.AWS
	switch {
	case a.AccessKeyID != "" && a.SecretAccessKey == "":
		r.field(path+".aws.secret_access_key", "aws.access_key_id is set without its secret_access_key")
	case a.AccessKeyID == "" && a.SecretAccessKey != "":
		r.field(path+".aws.access_key_id", "aws.secret_access_key is set without its access_key_id")
	case a.SessionToken != "" && a.AccessKeyID == "":
		r.field(path+".aws.session_token", "aws.session_token goes with access_key_id and secret_access_key")
	}
	if a.Profile != "" && a.AccessKeyID != "" {
		r.field(path+".aws.profile", "aws.profile and static keys both set: choose one")
	}
}

func checkVertex(r *report, path string, p Provider) {
	if p.Project == "" {
		r.field(path+".project", "a vertex provider needs its Google Cloud project: project: my-project")
	}
	if p.Region == "" {
		r.field(path+".region", "a vertex provider needs its location: region: us-east5, europe-west1, … or global")
	}
	if len(p.Keys) > 0 {
		r.field(path+".keys", "vertex authenticates with Google credentials, not keys: give credentials_file, or leave it out for application default credentials")
	}
}

func checkAzure(r *report, path string, p Provider) {
	if p.BaseURL == "" {
		r.field(path+".base_url", "an azure provider needs its resource's endpoint: base_url: https://my-resource.openai.azure.com")
	}
	e, entra := p.Entra, p.Entra != Entra{}
	switch {
	case !entra && len(p.Keys) == 0:
		r.field(path+".keys", "an azure provider needs api-keys (keys: [\"${AZURE_OPENAI_API_KEY}\"]) or an Entra ID application (entra:)")
	case entra && len(p.Keys) > 0:
		r.field(path+".entra", "entra and keys both set: an azure provider authenticates with one")
	}
	if !entra {
		return
	}
	if e.TenantID == "" {
		r.field(path+".entra.tenant_id", "entra needs the application's tenant_id")
	}
	if e.ClientID == "" {
		r.field(path+".entra.client_id", "entra needs the application's client_id")
	}
	switch {
	case e.ClientSecret == "" && e.FederatedTokenFile == "":
		r.field(path+".entra", "entra needs client_secret, or federated_token_file for workload identity")
	case e.ClientSecret != "" && e.FederatedTokenFile != "":
		r.field(path+".entra", "entra has client_secret and federated_token_file: choose one")
	}
	if e.AuthorityHost != "" {
		checkURL(r, path+".entra.authority_host", e.AuthorityHost)
	}
}

// checkCloudTarget checks what a target of a cloud provider needs.
func checkCloudTarget(r *report, path string, t Target, p Provider) {
	if t.ModelID != "" {
		checkName(r, path+".model_id", "model_id", t.ModelID)
	}
	switch {
	case t.Deployment != "" && p.Type != TypeAzure:
		r.field(path+".deployment", "deployment is read for azure providers only, not for type "+string(p.Type))
	case p.Type == TypeAzure && t.Deployment == "" && p.APIVersion != "v1":
		r.field(path+".deployment", "an azure target needs its deployment's name (deployment: my-gpt-4o); or use api_version: v1, where the model is the deployment")
	case t.Deployment != "":
		checkName(r, path+".deployment", "deployment", t.Deployment)
	}
}

func containsType(types []ProviderType, t ProviderType) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

func joinTypes(types []ProviderType) string {
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = string(t)
	}
	return strings.Join(s, " and ")
}

// checkModelIDs refuses one provider's model sent as two ids: a target is
// named by its provider and model, so the two would be one target.
func (c *Config) checkModelIDs(r *report) {
	type key struct{ provider, model string }
	first := map[key]string{} // → path of the first target
	ids := map[key]string{}
	for i, m := range c.Models {
		for j, t := range m.Targets {
			k, path := key{t.Provider, t.Model}, "models["+itoa(i)+"].targets["+itoa(j)+"]"
			if c.Providers[t.Provider].Type == TypeAzure {
				continue // named by their deployments
			}
			if p, seen := first[k]; !seen {
				first[k], ids[k] = path, t.ModelID
			} else if ids[k] != t.ModelID {
				r.field(path+".model_id", "model "+quote(t.Model)+" of provider "+quote(t.Provider)+" has another model_id at "+p+" ("+r.place(p)+"): one provider's model is one target; give them different provider names")
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
