#!/usr/bin/env bash
# Installs and starts what the test suites need from the system, idempotently:
# ripgrep (host grep), Go (the symbol oracle), bubblewrap (confined host
# commands), three container engines with
# the busybox test image in each (container backend):
#   - the local Docker engine (/var/run/docker.sock);
#   - Podman's Docker-compatible API service on a socket of its own;
#   - a second dockerd reached over TCP with TLS and client certificates
#     (certificates made here by openssl), for the remote-engine tests;
#   - an sshd of its own on 127.0.0.1 (keys made here by ssh-keygen), whose
#     account reaches the local Docker engine: the SSH engine tests;
# and a PostgreSQL server on a Unix socket (the PostgreSQL state store).
# In CI a missing engine or server is a failure, never a skip.
set -euo pipefail

IMAGE="${CTXFS_TEST_IMAGE:-ctxfs-busybox:latest}"
PODMAN_SOCKET="${CTXFS_PODMAN_SOCKET:-/run/ctxfs-podman/podman.sock}"
TLS_DIR="${CTXFS_TLS_DIR:-/var/lib/ctxfs-tls}"
TLS_PORT="${CTXFS_TLS_PORT:-23760}"
TLS_STATE="/var/lib/ctxfs-dockerd-tls"
TLS_EXEC="/run/ctxfs-dockerd-tls"

need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v tmux >/dev/null 2>&1 || need+=(tmux) # a real terminal for the approval prompt test
# Go's own parser is the Go oracle of the symbol eval (packages/context/test/symbols-oracle.test.ts).
command -v go >/dev/null 2>&1 || need+=(golang-go)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)     # the SSH engine tests' server
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap) # confines host commands (run_command, @ctxfs/commands)
[ -x /bin/busybox ] || need+=(busybox-static)
# The edit journal's write-ahead order, read from one edit's system calls (packages/context/test/journal-durability.test.ts).
command -v strace >/dev/null 2>&1 || need+=(strace)
# A native stack from the core of a test process that crashes (.ci/core-report.sh).
command -v gdb >/dev/null 2>&1 || need+=(gdb)
if [ "${#need[@]}" -gt 0 ]; then
  echo "ctxfs: apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The test image's root filesystem, built once from busybox-static (into
# $rootfs_tar) and imported into each engine that lacks it.
rootfs_tar=""
trap '[ -z "$rootfs_tar" ] || rm -f "$rootfs_tar"' EXIT
image_tar() {
  if [ -z "$rootfs_tar" ]; then
    local rootfs
    rootfs="$(mktemp -d)"
    mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/work" "$rootfs/etc"
    cp /bin/busybox "$rootfs/bin/busybox"
    for applet in $(/bin/busybox --list); do
      [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
    done
    chmod 1777 "$rootfs/tmp"
    echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
    echo 'root:x:0:' >"$rootfs/etc/group"
    rootfs_tar="$(mktemp --suffix=.tar)"
    tar -C "$rootfs" -cf "$rootfs_tar" .
    rm -rf "$rootfs"
  fi
}

wait_for() { # what, command...
  local what="$1"
  shift
  for _ in $(seq 1 60); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "ctxfs: $what did not start"
  return 1
}

# Daemons start from / and are restarted when the directory they were started
# from is gone: a CI job runs from a fresh clone that a later job deletes, and
# Podman's conmon then fails every container ("Failed to get working
# directory", an HTTP 500 "write child: broken pipe" through the API).
restart_if_cwd_gone() {
  local pattern="$1" pid stale=0
  for pid in $(pgrep -f "$pattern" || true); do
    case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in *"(deleted)") stale=1 ;; esac
  done
  if [ "$stale" = 1 ]; then
    echo "ctxfs: restarting '$pattern' (started from a directory since deleted)"
    pkill -f "$pattern" || true
    for _ in $(seq 1 30); do pgrep -f "$pattern" >/dev/null || break; sleep 1; done
  fi
}

# ---- Docker, the local engine
restart_if_cwd_gone '^dockerd --iptables=false --bridge=none$'
if ! docker info >/dev/null 2>&1; then
  echo "ctxfs: starting dockerd"
  (cd / && exec nohup dockerd --iptables=false --bridge=none >/tmp/ctxfs-dockerd.log 2>&1) &
  wait_for dockerd docker info || { tail -20 /tmp/ctxfs-dockerd.log; exit 1; }
fi
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "ctxfs: importing $IMAGE into Docker"
  image_tar
  docker import -c 'CMD ["/bin/sh"]' "$rootfs_tar" "$IMAGE" >/dev/null
fi
echo "ctxfs: docker $(docker version --format '{{.Server.Version}}'), image $IMAGE ready"

# ---- Podman, through its Docker-compatible API service
# Podman asks the runtime for nofile and nproc limits of 1048576 by default;
# on a machine whose hard limits are lower (this one allows 20000 open files)
# runc refuses every container with "error setting rlimits ... operation not
# permitted". 1024 is ample for a workspace helper and fits everywhere.
mkdir -p /etc/containers/containers.conf.d
cat >/etc/containers/containers.conf.d/ctxfs-ulimits.conf <<'CONF'
# Written by ctxfs .ci/system-deps.sh: Podman's default limits (nofile and
# nproc 1048576) exceed this machine's hard limits, and runc refuses them.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
CONF
# A finished exec of the API service lingers exit_command_delay seconds (300
# by default) with a conmon of its own, then a `podman container cleanup`
# process runs for it. The cleanups of a burst of execs (the suites stream
# hundreds of files a minute) land together five minutes on and hold the
# container's lock: the API went silent for about 70 s and tests timed out.
# ctxfs inspects an exec as soon as its stream ends, so 10 s is ample.
exec_conf=/etc/containers/containers.conf.d/ctxfs-exec.conf
exec_conf_text='# Written by ctxfs .ci/system-deps.sh: see the comment there (exec cleanup bursts).
[engine]
exit_command_delay = 10'
if [ "$(cat "$exec_conf" 2>/dev/null)" != "$exec_conf_text" ]; then
  printf '%s\n' "$exec_conf_text" >"$exec_conf"
  if pgrep -f "podman system service --time=0 unix://$PODMAN_SOCKET" >/dev/null; then
    echo "ctxfs: restarting podman system service (its exec settings changed)"
    pkill -f "podman system service --time=0 unix://$PODMAN_SOCKET" || true
    for _ in $(seq 1 30); do pgrep -f "podman system service --time=0 unix://$PODMAN_SOCKET" >/dev/null || break; sleep 1; done
  fi
fi
restart_if_cwd_gone "podman system service --time=0 unix://$PODMAN_SOCKET"
if ! curl -sf --unix-socket "$PODMAN_SOCKET" http://podman/_ping >/dev/null 2>&1; then
  echo "ctxfs: starting podman system service on $PODMAN_SOCKET"
  mkdir -p "$(dirname "$PODMAN_SOCKET")"
  rm -f "$PODMAN_SOCKET"
  # --time=0: the service never exits for want of clients.
  (cd / && exec nohup podman system service --time=0 "unix://$PODMAN_SOCKET" >/tmp/ctxfs-podman.log 2>&1) &
  wait_for "podman system service" curl -sf --unix-socket "$PODMAN_SOCKET" http://podman/_ping || { tail -20 /tmp/ctxfs-podman.log; exit 1; }
fi
if ! podman image exists "$IMAGE"; then
  echo "ctxfs: importing $IMAGE into Podman"
  image_tar
  podman import -q -c 'CMD ["/bin/sh"]' "$rootfs_tar" "$IMAGE" >/dev/null
fi
echo "ctxfs: podman $(podman version --format '{{.Server.Version}}' 2>/dev/null || podman --version), image $IMAGE ready"

# ---- A second dockerd over TCP with TLS (the remote-engine tests)
# Certificates: a CA, the server's (127.0.0.1 and localhost), a client's in
# DOCKER_CERT_PATH layout (ca.pem, cert.pem, key.pem), and a second, untrusted
# CA with a client certificate of its own, for the refusal tests.
make_cert() { # dir, ca-dir, subject, extension lines
  local dir="$1" ca="$2" subject="$3" ext="$4"
  mkdir -p "$dir"
  openssl genrsa -out "$dir/key.pem" 2048 2>/dev/null
  openssl req -new -key "$dir/key.pem" -subj "$subject" -out "$dir/req.csr" 2>/dev/null
  printf '%b' "$ext" >"$dir/ext.cnf"
  openssl x509 -req -days 3650 -in "$dir/req.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca-key.pem" -CAcreateserial \
    -extfile "$dir/ext.cnf" -out "$dir/cert.pem" 2>/dev/null
  cp "$ca/ca.pem" "$dir/ca.pem"
  rm -f "$dir/req.csr" "$dir/ext.cnf"
  chmod 0600 "$dir/key.pem"
}
make_ca() { # dir, name
  mkdir -p "$1"
  openssl genrsa -out "$1/ca-key.pem" 2048 2>/dev/null
  openssl req -new -x509 -days 3650 -key "$1/ca-key.pem" -subj "/CN=$2" -out "$1/ca.pem" 2>/dev/null
  chmod 0600 "$1/ca-key.pem"
}
if [ ! -s "$TLS_DIR/client/cert.pem" ] || [ ! -s "$TLS_DIR/rogue-client/cert.pem" ]; then
  echo "ctxfs: making TLS certificates in $TLS_DIR"
  rm -rf "$TLS_DIR"
  make_ca "$TLS_DIR/ca" 'ctxfs test CA'
  make_cert "$TLS_DIR/server" "$TLS_DIR/ca" '/CN=localhost' 'subjectAltName = IP:127.0.0.1,DNS:localhost\nextendedKeyUsage = serverAuth\n'
  make_cert "$TLS_DIR/client" "$TLS_DIR/ca" '/CN=ctxfs-client' 'extendedKeyUsage = clientAuth\n'
  make_ca "$TLS_DIR/rogue-ca" 'ctxfs untrusted CA'
  make_cert "$TLS_DIR/rogue-client" "$TLS_DIR/rogue-ca" '/CN=ctxfs-rogue-client' 'extendedKeyUsage = clientAuth\n'
fi
tls_docker() { DOCKER_HOST="tcp://127.0.0.1:$TLS_PORT" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$TLS_DIR/client" docker "$@"; }
restart_if_cwd_gone "dockerd --data-root $TLS_STATE"
if ! tls_docker info >/dev/null 2>&1; then
  echo "ctxfs: starting a second dockerd on tcp://127.0.0.1:$TLS_PORT (TLS, client certificates)"
  mkdir -p "$TLS_STATE" "$TLS_EXEC"
  # Its own state, run directory, pid file and (managed) containerd, so the
  # local engine is never touched.
  (cd / && exec nohup dockerd --data-root "$TLS_STATE" --exec-root "$TLS_EXEC" --pidfile "$TLS_EXEC/dockerd.pid" \
    -H "tcp://127.0.0.1:$TLS_PORT" --tlsverify --tlscacert "$TLS_DIR/server/ca.pem" \
    --tlscert "$TLS_DIR/server/cert.pem" --tlskey "$TLS_DIR/server/key.pem" \
    --iptables=false --bridge=none >/tmp/ctxfs-dockerd-tls.log 2>&1) &
  wait_for "the TLS dockerd" tls_docker info || { tail -20 /tmp/ctxfs-dockerd-tls.log; exit 1; }
fi
if ! tls_docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "ctxfs: importing $IMAGE into the TLS dockerd"
  image_tar
  tls_docker import -c 'CMD ["/bin/sh"]' "$rootfs_tar" "$IMAGE" >/dev/null
fi
echo "ctxfs: TLS engine tcp://127.0.0.1:$TLS_PORT (certificates in $TLS_DIR/client), image $IMAGE ready"

# ---- Docker over SSH (the SSH engine tests)
# An sshd of its own (its config, host key, pid file and port; a system sshd,
# if any, is left alone) on 127.0.0.1, key authentication only, letting in one
# account, $SSH_USER, which is in the docker group: over SSH the engine is
# reached by running `docker system dial-stdio` there, as the docker CLI does.
# Made once in $SSH_DIR: the host key and a known_hosts line for it; client
# keys (ed25519, and ecdsa for the second key type ssh2 handles in pure
# JavaScript) in authorized_keys; a rogue key that is not; and a "nodocker"
# key whose forced command runs the request with no docker on the PATH (a
# host without the docker CLI).
SSH_DIR="${CTXFS_SSH_DIR:-/var/lib/ctxfs-ssh}"
SSH_PORT="${CTXFS_SSH_PORT:-22220}"
SSH_USER=ctxfs-ssh
SSH_RUN=/run/ctxfs-sshd
if ! id -u "$SSH_USER" >/dev/null 2>&1; then
  echo "ctxfs: adding user $SSH_USER (group docker) for the SSH engine tests"
  getent group docker >/dev/null || groupadd --system docker
  # '*' rather than a locked '!': without PAM, sshd refuses a locked account even for keys.
  useradd --system --home-dir "$SSH_DIR/home" --no-create-home --shell /bin/sh --groups docker --password '*' "$SSH_USER"
fi
if [ ! -s "$SSH_DIR/known_hosts" ] || [ ! -s "$SSH_DIR/nodocker/id_ed25519" ]; then
  echo "ctxfs: making SSH keys in $SSH_DIR"
  rm -rf "$SSH_DIR"
  mkdir -p "$SSH_DIR/host" "$SSH_DIR/client" "$SSH_DIR/rogue" "$SSH_DIR/nodocker"
  ssh-keygen -q -t ed25519 -N '' -C ctxfs-test-host -f "$SSH_DIR/host/ssh_host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C ctxfs-test-client -f "$SSH_DIR/client/id_ed25519"
  ssh-keygen -q -t ecdsa -b 256 -N '' -C ctxfs-test-client-ecdsa -f "$SSH_DIR/client/id_ecdsa"
  ssh-keygen -q -t ed25519 -N '' -C ctxfs-test-rogue -f "$SSH_DIR/rogue/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C ctxfs-test-nodocker -f "$SSH_DIR/nodocker/id_ed25519"
  {
    cat "$SSH_DIR/client/id_ed25519.pub" "$SSH_DIR/client/id_ecdsa.pub"
    printf 'command="PATH=/nonexistent; eval \\"$SSH_ORIGINAL_COMMAND\\"",restrict %s\n' "$(cat "$SSH_DIR/nodocker/id_ed25519.pub")"
  } >"$SSH_DIR/authorized_keys"
  echo "[127.0.0.1]:$SSH_PORT $(cut -d' ' -f1,2 "$SSH_DIR/host/ssh_host_ed25519_key.pub")" >"$SSH_DIR/known_hosts"
  # sshd's StrictModes: root-owned, nothing group- or world-writable on the way.
  chmod 0755 "$SSH_DIR"
  chmod 0644 "$SSH_DIR/authorized_keys" "$SSH_DIR/known_hosts"
fi
mkdir -p "$SSH_DIR/home" "$SSH_RUN" /run/sshd
chown "$SSH_USER:" "$SSH_DIR/home"
sshd_conf_text="# Written by ctxfs .ci/system-deps.sh: the SSH engine tests' own sshd.
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH_DIR/host/ssh_host_ed25519_key
PidFile $SSH_RUN/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
AllowUsers $SSH_USER
PermitRootLogin no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitTTY no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PrintMotd no
# Test files connect in parallel; MaxSessions (channels per connection) stays at sshd's default of 10.
MaxStartups 64:30:128"
if [ "$(cat "$SSH_DIR/sshd_config" 2>/dev/null)" != "$sshd_conf_text" ]; then
  printf '%s\n' "$sshd_conf_text" >"$SSH_DIR/sshd_config"
  ssh_restart=1
fi
ssh_docker() {
  ssh -q -p "$SSH_PORT" -i "$SSH_DIR/client/id_ed25519" -o BatchMode=yes -o IdentitiesOnly=yes \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$SSH_DIR/known_hosts" -o ConnectTimeout=5 \
    "$SSH_USER@127.0.0.1" docker "$@"
}
# The pid file names our sshd only; its listener's pid is checked to be an sshd.
sshd_pid="$(cat "$SSH_RUN/sshd.pid" 2>/dev/null || true)"
if [ -n "$sshd_pid" ] && [ "$(cat "/proc/$sshd_pid/comm" 2>/dev/null)" != sshd ]; then sshd_pid=""; fi
if [ -n "$sshd_pid" ] && { [ "${ssh_restart:-0}" = 1 ] || ! ssh_docker version >/dev/null 2>&1; }; then
  echo "ctxfs: stopping the test sshd (pid $sshd_pid): its config changed or it does not answer"
  kill "$sshd_pid" || true
  for _ in $(seq 1 30); do [ -d "/proc/$sshd_pid" ] || break; sleep 1; done
  sshd_pid=""
fi
if [ -z "$sshd_pid" ]; then
  echo "ctxfs: starting sshd on 127.0.0.1:$SSH_PORT ($SSH_DIR/sshd_config)"
  /usr/sbin/sshd -t -f "$SSH_DIR/sshd_config"
  (cd / && /usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E /tmp/ctxfs-sshd.log)
  wait_for "the test sshd" ssh_docker version || { tail -20 /tmp/ctxfs-sshd.log; exit 1; }
fi
echo "ctxfs: SSH engine ssh://$SSH_USER@127.0.0.1:$SSH_PORT (keys and known_hosts in $SSH_DIR), docker $(ssh_docker version --format '{{.Server.Version}}')"

# ---- PostgreSQL, for the context layer's PostgreSQL state store
# A throwaway cluster of Debian's server, run by the `postgres` user with its
# data under $PG_DIR (kept between runs on a machine, so a running server is
# reused), listening on a Unix socket only, trust authentication: a database
# `ctxfs` owned by a role `ctxfs`, which the tests connect as. ./run-tests
# passes its URL to the tests as CTXFS_TEST_POSTGRES_URL.
PG_DIR="${CTXFS_PG_DIR:-/var/tmp/ctxfs-pg}"
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ -z "$(pg_bin)" ] || [ ! -x "$(pg_bin)/postgres" ]; then
  echo "ctxfs: apt-get install postgresql"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PG_BIN="$(pg_bin)"
as_pg() { (cd / && runuser -u postgres -- "$@"); }
pg_ready() { as_pg "$PG_BIN/pg_isready" -q -h "$PG_DIR/socket" -d postgres; }
mkdir -p "$PG_DIR/socket"
chown postgres: "$PG_DIR" "$PG_DIR/socket"
chmod 0755 "$PG_DIR" "$PG_DIR/socket"
pg_init() {
  echo "ctxfs: initdb $PG_DIR/data"
  rm -rf "$PG_DIR/data"
  as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  # No TCP; the socket in a directory of its own. The cluster is scratch, so
  # durability is traded for speed (a crash loses it, and initdb remakes it).
  cat >>"$PG_DIR/data/postgresql.conf" <<CONF
# ctxfs .ci/system-deps.sh: a scratch cluster for the tests.
listen_addresses = ''
unix_socket_directories = '$PG_DIR/socket'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
}
[ -s "$PG_DIR/data/PG_VERSION" ] || pg_init
if ! pg_ready; then
  # A server that died leaves its pid file (and the socket's lock file)
  # behind; one alive but not answering (its socket deleted) is stopped. The
  # pid is checked to be a postgres process: after a reboot it may be another's.
  pg_pid="$(head -1 "$PG_DIR/data/postmaster.pid" 2>/dev/null || true)"
  if [ -n "$pg_pid" ] && [ "$(cat "/proc/$pg_pid/comm" 2>/dev/null)" = postgres ]; then
    echo "ctxfs: stopping PostgreSQL (pid $pg_pid), which does not answer on $PG_DIR/socket"
    as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DIR/data" -m fast -w -t 60 >/dev/null || true
  fi
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    # Its server died without shutting down (a reboot, a kill): with fsync off
    # its files may be torn, and replaying its WAL took over a minute here
    # (past pg_ctl's wait). The tests make what they need, so start afresh.
    echo "ctxfs: PostgreSQL was not shut down cleanly; making the scratch cluster again"
    pg_init
  fi
  rm -f "$PG_DIR/socket/.s.PGSQL."*
  echo "ctxfs: starting PostgreSQL on $PG_DIR/socket"
  as_pg "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DIR/data" -l "$PG_DIR/server.log" >/dev/null || { tail -20 "$PG_DIR/server.log"; exit 1; }
  wait_for PostgreSQL pg_ready || { tail -20 "$PG_DIR/server.log"; exit 1; }
fi
pg_sql() { as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR/socket" -U postgres -d postgres -tAc "$1"; }
[ "$(pg_sql "SELECT 1 FROM pg_roles WHERE rolname = 'ctxfs'")" = 1 ] || pg_sql 'CREATE ROLE ctxfs LOGIN'
[ "$(pg_sql "SELECT 1 FROM pg_database WHERE datname = 'ctxfs'")" = 1 ] || pg_sql 'CREATE DATABASE ctxfs OWNER ctxfs'
echo "ctxfs: PostgreSQL $(pg_sql 'SHOW server_version'), postgres://ctxfs@/ctxfs?host=$PG_DIR/socket"
