# syntax=docker/dockerfile:1
#
# One image per service, all built from this file:
#   docker build --build-arg SERVICE=merchant -t payplat/merchant .
# SERVICE is one of gateway, merchant, pool, payment-projection, webhook-dispatcher or
# payplat-ctl (the operator CLI). Every image carries all six binaries (payplat-ctl included,
# for `docker compose exec` / `kubectl exec`) and starts the one SERVICE names.

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0
# The whole workspace: go.work ties the modules together (pkg, proto-events, services/*).
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/ \
        ./services/gateway/cmd/gateway \
        ./services/merchant/cmd/merchant \
        ./services/pool/cmd/pool \
        ./services/payment-projection/cmd/payment-projection \
        ./services/webhook-dispatcher/cmd/webhook-dispatcher \
        ./services/ctl/cmd/payplat-ctl

# Alpine rather than distroless: its busybox wget serves the compose healthchecks, and its
# CA bundle the HTTPS webhook deliveries.
FROM alpine:3.22
ARG SERVICE=gateway
RUN addgroup -S -g 10001 payplat && adduser -S -D -H -u 10001 -G payplat payplat
COPY --from=build /out/ /usr/local/bin/
RUN test -x "/usr/local/bin/${SERVICE}" && ln -s "/usr/local/bin/${SERVICE}" /usr/local/bin/service
# Where compose keeps the NATS users' seeds (a volume takes this directory's owner).
RUN mkdir -p /var/lib/payplat/nats-keys && chown 10001:10001 /var/lib/payplat/nats-keys
USER 10001:10001
# The services read everything from the environment; listening defaults are loopback, so
# containers set GATEWAY_ADDR=:8080 and HEALTH_ADDR=:8081.
ENV LOG_FORMAT=json
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/service"]
