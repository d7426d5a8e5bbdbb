#!/usr/bin/env bash
# Makes the two base images the container test builds on, where no registry is reachable:
#   localhost/yiem-node:20-bookworm   a Debian bookworm root file system (debootstrap) with this
#                                     machine's Node 20 (node, npm, npx), its CA bundle and a
#                                     `node` user (uid 1000): stands in for node:20-bookworm-slim
#   localhost/yiem-redis:bookworm     the same with Debian's redis-server 7.0 as entry point,
#                                     started as the official image starts it (protected mode
#                                     off, so other containers may connect): stands in for
#                                     redis:7.4.6-alpine
# An image already present is kept (YIEM_REBUILD_BASE=1 makes both again). Needs root,
# debootstrap and podman; reaches Debian's package mirror only.
set -euo pipefail

node_image=localhost/yiem-node:20-bookworm
redis_image=localhost/yiem-redis:bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=${YIEM_BASE_WORK:-/var/tmp/yiem-base-images}

have() { [ "${YIEM_REBUILD_BASE:-0}" != 1 ] && podman image exists "$1"; }

make_node_image() {
  local node_bin npm_dir rootfs
  node_bin=$(readlink -f "$(command -v node)")
  [ "$("$node_bin" -p 'process.versions.node.split(".")[0]')" = 20 ] \
    || { echo "base images: this machine's node is not Node 20" >&2; exit 1; }
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  rm -rf "$work" && mkdir -p "$work"
  rootfs=$work/rootfs
  echo "base images: debootstrap bookworm into $rootfs (from $mirror)"
  debootstrap --variant=minbase --include=libstdc++6,ca-certificates,redis-server \
    bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # This machine's trust store, so npm in a build reaches the registry through whatever TLS
  # proxy the machine trusts (Node reads it through NODE_EXTRA_CA_CERTS, set below).
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  echo "node:x:1000:1000::/home/node:/bin/sh" >>"$rootfs/etc/passwd"
  echo "node:x:1000:" >>"$rootfs/etc/group"
  echo "node:*:19000:0:99999:7:::" >>"$rootfs/etc/shadow"
  mkdir -p "$rootfs/home/node" && chown 1000:1000 "$rootfs/home/node"
  tar -C "$rootfs" -c . | podman import \
    --change 'CMD ["node"]' \
    --change "ENV NODE_VERSION=$("$node_bin" -p process.versions.node)" \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    - "$node_image"
  rm -rf "$work"
}

make_redis_image() {
  podman build -t "$redis_image" -f - <<CONTAINERFILE
FROM $node_image
RUN printf '%s\n' '#!/bin/sh' \
  'if [ "\$1" = redis-server ]; then shift; exec redis-server --protected-mode no "\$@"; fi' \
  'exec "\$@"' >/usr/local/bin/redis-entrypoint && chmod 0755 /usr/local/bin/redis-entrypoint \
  && mkdir -p /data
WORKDIR /data
ENTRYPOINT ["/usr/local/bin/redis-entrypoint"]
CMD ["redis-server"]
CONTAINERFILE
}

if have "$node_image"; then echo "base images: $node_image is present"; else make_node_image; fi
if have "$redis_image"; then echo "base images: $redis_image is present"; else make_redis_image; fi
