# syntax=docker/dockerfile:1
#
# The Fusebox gateway as a static binary in a distroless image that runs as
# a non-root user (uid 65532). Build and run from the repository root:
#
#   docker build -t fusebox \
#     --build-arg VERSION="$(git describe --tags --always)" --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker run --rm -p 127.0.0.1:8080:8080 -e OPENAI_API_KEY \
#     -v "$PWD/fusebox.yaml:/etc/fusebox/fusebox.yaml:ro" fusebox
#
# Pass with -e every variable the configuration names (${OPENAI_API_KEY},
# a client's key, …). The configuration must listen beyond the container's
# loopback (listen: 0.0.0.0:8080) and, since that is beyond loopback,
# configure client keys or be started with --allow-open; the README's
# Install section has the steps from `fusebox config example`. deploy/compose.yaml runs three
# replicas on Redis. deploy/packaging_test.go builds the binary with the
# go build line below, so keep that line one command (whose only
# expansions are the stage's ARGs, as "${NAME}").

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a change of source reuses the downloaded modules.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# What `fusebox version` prints. The build context has no .git, so Go
# records no revision of its own: pass them, e.g.
#   --build-arg VERSION="$(git describe --tags --always)" --build-arg REVISION="$(git rev-parse HEAD)"
# Left empty, the binary says "(devel)". .goreleaser.yaml stamps the same
# two variables.
ARG VERSION=""
ARG REVISION=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/fuseboxhq/fusebox/internal/cli.version=${VERSION} -X github.com/fuseboxhq/fusebox/internal/cli.revision=${REVISION}" -o /out/fusebox ./cmd/fusebox

FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.title="fusebox" \
      org.opencontainers.image.description="Fusebox: an OpenAI- and Anthropic-compatible AI gateway that keeps working while providers fail" \
      org.opencontainers.image.source="https://github.com/fuseboxhq/fusebox" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY LICENSE /usr/share/doc/fusebox/LICENSE
COPY --from=build /out/fusebox /fusebox
USER nonroot:nonroot
EXPOSE 8080
# Distroless has no shell and no curl: the binary probes its own /healthz.
# A configuration that listens on another port needs --health-cmd (docker
# run) or healthcheck.test (compose) to match.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/fusebox", "health", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/fusebox"]
CMD ["serve", "--config", "/etc/fusebox/fusebox.yaml"]
