#!/usr/bin/env bash
# CI check of the event contract (proto-events):
#   1. buf lint;
#   2. buf breaking against the committed baseline image proto-events/breaking-baseline.binpb;
#   3. stale code: regenerates proto-events/gen into a temporary directory and compares it with the
#      working tree; on a difference it rewrites the tree with the fresh code and fails;
#   4. uncommitted code: fails when proto-events/gen differs from what git has committed
#      (modified, deleted or untracked files), because CI must build what the repository holds;
#   5. the partner API's document api/openapi.yaml is linted (api/cmd/openapi lint: a valid
#      OpenAPI 3.1 document, examples valid, house rules), and its generated files
#      (api/openapi.json, api/client/client.gen.go) are current and committed.
# Exit status: 0 all good, 1 lint or breaking failure, 2 stale generated code, 3 generated code
# up to date but not committed. Runs from any directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gen_rel="proto-events/gen"
buf="$(GOWORK=off go -C "$root/tools" tool -n buf)"

echo "==> buf lint"
(cd "$root/proto-events" && "$buf" lint) || {
  echo "FAIL: buf lint found problems in proto-events/proto (see above)." >&2
  exit 1
}

echo "==> buf breaking against proto-events/breaking-baseline.binpb"
(cd "$root/proto-events" && "$buf" breaking --against breaking-baseline.binpb) || {
  cat >&2 <<'MSG'
FAIL: the schemas break the contract recorded in proto-events/breaking-baseline.binpb.
Make the change backwards compatible (new fields and messages only, or a new v2 package).
If the break is deliberate and every consumer is ready, refresh the baseline in the same commit:
  scripts/generate.sh --refresh-breaking-baseline
(see proto-events/README.md, section 5).
MSG
  exit 1
}

echo "==> generated code is up to date with the .proto files"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/generate.sh" --out "$tmp"
if ! diff -ruN "$root/$gen_rel" "$tmp/gen" >"$tmp/stale.diff"; then
  cat "$tmp/stale.diff"
  rm -rf "${root:?}/$gen_rel"
  cp -R "$tmp/gen" "$root/$gen_rel"
  cat >&2 <<MSG
FAIL: stale generated code: $gen_rel does not match what the .proto files generate (diff above).
The tree has been regenerated now; review it and commit it. Next time run scripts/generate.sh
(make generate) after editing proto-events/proto.
MSG
  exit 2
fi
echo "ok: $gen_rel matches the .proto files"

echo "==> api/openapi.yaml lint"
(cd "$root/api" && GOWORK=off go run ./cmd/openapi lint) || {
  echo "FAIL: api/openapi.yaml has findings (see above)." >&2
  exit 1
}

echo "==> api generated files are up to date with api/openapi.yaml"
for f in openapi.json client/client.gen.go; do
  if ! diff -u "$root/api/$f" "$tmp/api/$f" >"$tmp/api-stale.diff"; then
    head -50 "$tmp/api-stale.diff"
    cp "$tmp/api/$f" "$root/api/$f"
    echo "FAIL: stale generated file api/$f (diff above); it has been regenerated now: review and commit it, and run make generate after editing api/openapi.yaml." >&2
    exit 2
  fi
done
echo "ok: api/openapi.json and api/client/client.gen.go match api/openapi.yaml"

echo "==> generated code is committed"
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "skip: $root is not a git work tree"
  exit 0
fi
changes="$(git -C "$root" status --porcelain --untracked-files=all -- "$gen_rel" api/openapi.json api/client/client.gen.go)"
if [[ -n "$changes" ]]; then
  echo "$changes" >&2
  cat >&2 <<MSG
FAIL: uncommitted generated code: $gen_rel is up to date with the .proto files, but the files
listed above differ from the last commit (modified, deleted, staged or untracked). Commit them.
MSG
  exit 3
fi
echo "ok: $gen_rel is committed"
