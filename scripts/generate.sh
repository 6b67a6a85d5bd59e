#!/usr/bin/env bash
# Regenerates the Go code of the event contract (proto-events/gen) from proto-events/proto with
# the buf, protoc-gen-go and protoc-gen-go-vtproto versions pinned in tools/go.mod, and the
# partner API's generated files from api/openapi.yaml: api/openapi.json (api/cmd/openapi) and the
# typed client api/client/client.gen.go (oapi-codegen, pinned in tools/go.mod). Used by
# `make generate`.
#
#   scripts/generate.sh                              regenerate proto-events/gen
#   scripts/generate.sh --out DIR                    generate into DIR/gen and DIR/api instead (used by check-generated.sh)
#   scripts/generate.sh --refresh-breaking-baseline  also rewrite proto-events/breaking-baseline.binpb;
#                                                    only to accept the current schemas deliberately
#                                                    (see proto-events/README.md, section 5)
#
# Runs from any directory; works offline once the Go module cache holds the tools' modules.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out=""
refresh_baseline=false
while (($#)); do
  case "$1" in
    --out)
      out="${2:?--out needs a directory}"
      shift 2
      ;;
    --refresh-breaking-baseline)
      refresh_baseline=true
      shift
      ;;
    *)
      echo "generate.sh: unknown argument: $1" >&2
      exit 2
      ;;
  esac
done

# The tools module is not part of go.work; `go tool -n` builds buf once (the build cache keeps it)
# and prints the binary's path, so buf can run from proto-events/ with a plain working directory.
buf="$(GOWORK=off go -C "$root/tools" tool -n buf)"

cd "$root/proto-events"
if [[ -n "$out" ]]; then
  mkdir -p "$out"
  "$buf" generate --output "$(cd "$out" && pwd)"
else
  "$buf" generate
fi

# The partner API: the document's JSON form and the typed client, from api/openapi.yaml.
oapi_codegen="$(GOWORK=off go -C "$root/tools" tool -n oapi-codegen)"
api_out="$root/api"
if [[ -n "$out" ]]; then
  api_out="$(cd "$out" && pwd)/api"
  mkdir -p "$api_out/client"
fi
(cd "$root/api" && GOWORK=off go run ./cmd/openapi json "$api_out/openapi.json")
(cd "$root/api" && "$oapi_codegen" -config client/oapi-codegen.yaml -o "$api_out/client/client.gen.go" openapi.yaml)

if [[ "$refresh_baseline" == true ]]; then
  "$buf" build --exclude-source-info --output breaking-baseline.binpb
  echo "generate.sh: rewrote proto-events/breaking-baseline.binpb; commit it with the schema change." >&2
fi
