#!/usr/bin/env bash
# Makes the sandbox's base image without an image registry: debootstrap a minimal Debian
# from Debian's package mirror, then `docker import` it. For hosts behind a firewall and for CI.
# Usage: sandbox/image/bootstrap-base.sh [IMAGE_NAME]   (default: agent-fix-base:bookworm)
# The image's tag names the Debian release (agent-fix-base:trixie is trixie); DEBIAN_SUITE overrides it.
set -euo pipefail
name="${1:-agent-fix-base:bookworm}"
suite="${DEBIAN_SUITE:-${name##*:}}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if docker image inspect "$name" >/dev/null 2>&1; then
  echo "base image $name already present; nothing to do"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }

root="$(mktemp -d /tmp/agent-fix-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
log="/tmp/agent-fix-debootstrap-$suite.log"
echo "debootstrapping $suite (minbase) into $root from $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1 || {
  echo "debootstrap of $suite failed; last lines of $log:" >&2
  tail -20 "$log" >&2
  exit 1
}
# Trim what an image never needs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'CMD ["/bin/bash"]' - "$name"
echo "imported $name"
