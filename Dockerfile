# syntax=docker/dockerfile:1
# engram's container: a static binary on a distroless base, running as a non-root user.
#   docker build -t engram .
#   docker run --rm engram --help
# The binary is built exactly as CI builds the one it tests (`make build`:
# go build ./cmd/engram), with cgo off so it is static.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: the layer is cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/engram ./cmd/engram \
 && /out/engram --help >/dev/null

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/engram /usr/local/bin/engram
# distroless' nonroot user (uid 65532); local state (the dev token, an embedded
# JetStream store) goes to a writable directory of its own.
USER 65532:65532
ENV ENGRAM_DATA_DIR=/tmp/engram \
    ENGRAM_HTTP_ADDR=:8080 \
    ENGRAM_WORKER_HTTP_ADDR=:9090 \
    ENGRAM_LOG_FORMAT=json
EXPOSE 8080 9090
# No shell or curl in the image: the binary probes itself. Workers override the URL
# (http://127.0.0.1:9090/readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/engram", "probe", "http://127.0.0.1:8080/readyz"]
ENTRYPOINT ["/usr/local/bin/engram"]
CMD ["serve", "--workers=false"]
