// Plain JavaScript on purpose: it runs before any TypeScript is loaded, so an
// old Node gets this message instead of ERR_UNKNOWN_FILE_EXTENSION.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `ctxfs needs Node >= 22.18 (it runs TypeScript directly); this is Node ${process.versions.node} (${process.execPath}).\n` +
      'Run ./start, which installs Node 24 and pnpm from the npm registry, or `source .ci/toolchain.sh` to put them on PATH.',
  );
  process.exit(1);
}
