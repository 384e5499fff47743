#!/usr/bin/env node
/**
 * `ctxfs-mcp`: checks the Node version, turns Node's compile cache on (from
 * the second start on, the server's modules are read as compiled code;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off), then runs the server
 * (main.ts).
 *
 * @module
 */

// A namespace import: a named one of enableCompileCache fails to link on an
// old Node before the version check below can speak.
import * as nodeModule from 'node:module';

// Checked before anything else is loaded, in code Node 20 can run: an older
// Node would otherwise stop at the first module it cannot load (node:sqlite,
// a .ts file) with an error that does not name the cause.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `ctxfs-mcp needs Node >= 22.18; this is Node ${process.versions.node} (${process.execPath}).\n` +
      'Install Node 24 (https://nodejs.org), or in a ctxfs checkout run ./start or `source .ci/toolchain.sh`.\n',
  );
  process.exit(1);
}

nodeModule.enableCompileCache?.();
await import('./main.ts');
