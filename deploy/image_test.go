package deploy_test

import (
	"strings"
	"testing"
)

// TestFinalStageIsDistrolessNonroot checks the image that ships: its last
// stage starts from distroless/static with the nonroot tag (no shell, no
// libc, uid 65532) and sets USER to nonroot, so the gateway never runs as
// root even where the base image's default user is overridden.
func TestFinalStageIsDistrolessNonroot(t *testing.T) {
	ins := readDockerfile(t)
	last := -1
	for i, in := range ins {
		if in.cmd == "FROM" {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	from := ins[last]
	base, _, _ := strings.Cut(strings.Fields(from.args)[0], "@") // a digest may pin it
	repo, tag, _ := strings.Cut(base, ":")
	if !strings.HasPrefix(repo, "gcr.io/distroless/static") || !strings.HasSuffix(tag, "nonroot") {
		t.Errorf("Dockerfile:%d: the final stage is FROM %s; want gcr.io/distroless/static…:…nonroot", from.line, from.args)
	}
	var user *instruction
	for i := last + 1; i < len(ins); i++ {
		if ins[i].cmd == "USER" {
			user = &ins[i]
		}
	}
	if user == nil {
		t.Fatalf("Dockerfile: the final stage sets no USER; want USER nonroot")
	}
	if name, _, _ := strings.Cut(user.args, ":"); name != "nonroot" && name != "65532" {
		t.Errorf("Dockerfile:%d: USER %s; want nonroot (uid 65532)", user.line, user.args)
	}
}
