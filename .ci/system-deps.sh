#!/usr/bin/env bash
# Installs and starts what the test suites need from the system, idempotently:
# ripgrep (host grep), Go (the symbol oracle), a Docker engine and the busybox test image (container
# backend). In CI a missing engine is a failure, never a skip.
set -euo pipefail

IMAGE="${CTXFS_TEST_IMAGE:-ctxfs-busybox:latest}"
need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v tmux >/dev/null 2>&1 || need+=(tmux) # a real terminal for the approval prompt test
# Go's own parser is the Go oracle of the symbol eval (packages/context/test/symbols-oracle.test.ts).
command -v go >/dev/null 2>&1 || need+=(golang-go)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /bin/busybox ] || need+=(busybox-static)
if [ "${#need[@]}" -gt 0 ]; then
  echo "ctxfs: apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "ctxfs: starting dockerd"
  nohup dockerd --iptables=false --bridge=none >/tmp/ctxfs-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "ctxfs: dockerd did not start"; tail -20 /tmp/ctxfs-dockerd.log; exit 1; }
fi

if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "ctxfs: building $IMAGE from busybox-static"
  rootfs="$(mktemp -d)"
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/work" "$rootfs/etc"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  chmod 1777 "$rootfs/tmp"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
  echo 'root:x:0:' >"$rootfs/etc/group"
  tar -C "$rootfs" -c . | docker import -c 'CMD ["/bin/sh"]' - "$IMAGE" >/dev/null
  rm -rf "$rootfs"
fi
echo "ctxfs: docker $(docker version --format '{{.Server.Version}}'), image $IMAGE ready"
