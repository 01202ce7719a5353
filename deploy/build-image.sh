#!/usr/bin/env bash
# Builds the app's image (Dockerfile) without an image registry: its base, agent-fix-base:trixie, is
# bootstrapped from Debian's mirror first when absent (sandbox/image/bootstrap-base.sh), as the
# sandbox's is. The tag names the package version and a hash of what the image copies, so a changed
# source gets a new tag and an unchanged one builds nothing: agent-fix:0.1.0-0123456789ab.
# Usage: deploy/build-image.sh [--print-tag] [--force]   (prints the tag last; also tags agent-fix:latest)
# Needs npm's registry from inside the build (npm's own tarball, then npm ci); DEBIAN_MIRROR as for the sandbox images.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
print_only=0 force=0
for arg in "$@"; do
  case "$arg" in
    --print-tag) print_only=1 ;;
    --force) force=1 ;;
    *) echo "unknown argument: $arg (usage: build-image.sh [--print-tag] [--force])" >&2; exit 2 ;;
  esac
done
base="${AGENT_FIX_APP_BASE_IMAGE:-agent-fix-base:trixie}"
version="$(node -p 'require("./package.json").version')"
# Exactly what the Dockerfile copies, plus the Dockerfile and the base's name.
hash="$( { echo "$base"; find Dockerfile package.json package-lock.json tsconfig.json app.yml config \
  deploy/healthcheck.mjs src worker sandbox -type f -print0 | sort -z | xargs -0 sha256sum; } \
  | sha256sum | cut -c1-12)"
image="agent-fix:$version-$hash"
if [ "$print_only" = 1 ]; then echo "$image"; exit 0; fi
if [ "$force" = 0 ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "app image $image already present; nothing to build" >&2
  docker tag "$image" agent-fix:latest
  echo "$image"
  exit 0
fi
bash sandbox/image/bootstrap-base.sh "$base" >&2
start=$(date +%s)
# The legacy builder: Debian's docker.io has no buildx plugin. The host's network: the steps reach
# Debian's mirror and npm's registry as the host does, whatever state the engine's bridge is in.
# The CAs this host added to Debian's (a TLS-inspecting proxy's) are trusted in the build too (fetching npm, npm ci);
# AGENT_FIX_BUILD_CA_FILE names another PEM file instead.
extra_ca=""
if [ -n "${AGENT_FIX_BUILD_CA_FILE:-}" ]; then
  extra_ca="$(cat "$AGENT_FIX_BUILD_CA_FILE")"
elif compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  extra_ca="$(cat /usr/local/share/ca-certificates/*.crt)"
fi
DOCKER_BUILDKIT=0 docker build --network host --build-arg "BASE=$base" --build-arg "VERSION=$version" \
  --build-arg "EXTRA_CA_CERTS=$extra_ca" -t "$image" . >&2
echo "built $image in $(($(date +%s) - start)) s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%d MB", $1/1e6}'))" >&2
# docker-compose.yml runs agent-fix:latest unless AGENT_FIX_IMAGE names another tag.
docker tag "$image" agent-fix:latest
echo "$image"
