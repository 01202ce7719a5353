#!/usr/bin/env bash
# Builds the sandbox image agent-fix-sandbox:VERSION (VERSION from sandbox/version.ts), bootstrapping
# its base image first when it is absent (no image registry needed). Builds nothing when the tag exists.
# Usage: sandbox/image/build.sh [--force]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="$(sed -n 's/^export const SANDBOX_IMAGE_VERSION = "\(.*\)";$/\1/p' "$here/../version.ts")"
[ -n "$version" ] || { echo "cannot read SANDBOX_IMAGE_VERSION from sandbox/version.ts" >&2; exit 1; }
image="agent-fix-sandbox:$version"
base="${AGENT_FIX_BASE_IMAGE:-agent-fix-base:bookworm}"

if [ "${1:-}" != "--force" ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "sandbox image $image already present; nothing to build"
  exit 0
fi
bash "$here/bootstrap-base.sh" "$base"
start=$(date +%s)
# The legacy builder: Debian's docker.io has no buildx plugin. The Dockerfile needs no build context.
DOCKER_BUILDKIT=0 docker build --build-arg "BASE=$base" --build-arg "VERSION=$version" \
  -t "$image" - <"$here/Dockerfile"
echo "built $image in $(($(date +%s) - start)) s"
