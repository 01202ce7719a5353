#!/usr/bin/env bash
# Builds a sandbox image, bootstrapping its base image first when it is absent (no image registry
# needed). Builds nothing when the tag exists.
#   slim (default): agent-fix-sandbox:VERSION        from Dockerfile on bookworm (SANDBOX_IMAGE_VERSION)
#   --rich:         agent-fix-sandbox-rich:VERSION   from rich.Dockerfile on trixie (SANDBOX_RICH_IMAGE_VERSION)
# Usage: sandbox/image/build.sh [--rich] [--force]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
variant=slim force=0
for arg in "$@"; do
  case "$arg" in
    --rich) variant=rich ;;
    --force) force=1 ;;
    *) echo "unknown argument: $arg (usage: build.sh [--rich] [--force])" >&2; exit 2 ;;
  esac
done
if [ "$variant" = rich ]; then
  constant=SANDBOX_RICH_IMAGE_VERSION name=agent-fix-sandbox-rich dockerfile="$here/rich.Dockerfile"
  base="${AGENT_FIX_RICH_BASE_IMAGE:-agent-fix-base:trixie}"
else
  constant=SANDBOX_IMAGE_VERSION name=agent-fix-sandbox dockerfile="$here/Dockerfile"
  base="${AGENT_FIX_BASE_IMAGE:-agent-fix-base:bookworm}"
fi
version="$(sed -n "s/^export const $constant = \"\(.*\)\";\$/\1/p" "$here/../version.ts")"
[ -n "$version" ] || { echo "cannot read $constant from sandbox/version.ts" >&2; exit 1; }
image="$name:$version"

if [ "$force" = 0 ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "sandbox image $image already present; nothing to build"
  exit 0
fi
bash "$here/bootstrap-base.sh" "$base"
start=$(date +%s)
# The legacy builder: Debian's docker.io has no buildx plugin. The Dockerfiles need no build context.
# AGENT_FIX_BUILD_NETWORK=host: for an engine without its default bridge (no docker0), where the
# build's apt-get cannot reach the mirror otherwise.
DOCKER_BUILDKIT=0 docker build ${AGENT_FIX_BUILD_NETWORK:+--network "$AGENT_FIX_BUILD_NETWORK"} \
  --build-arg "BASE=$base" --build-arg "VERSION=$version" -t "$image" - <"$dockerfile"
echo "built $image in $(($(date +%s) - start)) s"
