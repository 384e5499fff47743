import { rmSync } from 'node:fs';
import { describeFilesystemConformance } from '@ctxfs/conformance';
import { findRipgrep, type HostFilesystem } from '@ctxfs/host';
import { openSeeded, removeWorkspace } from './helpers.ts';

const probe = await openSeeded({});
const capabilities = probe.capabilities;
await probe.close();
await removeWorkspace(probe);

describeFilesystemConformance({
  name: findRipgrep() ? 'host (ripgrep)' : 'host (no rg on PATH)',
  capabilities,
  create: ({ files, dirs, links, readOnly }) => openSeeded({ files, dirs, links, readOnly }),
  removeRoot: async (fs) => rmSync((fs as HostFilesystem).root, { recursive: true }),
  cleanup: removeWorkspace,
});

describeFilesystemConformance({
  name: 'host (JS scanner)',
  capabilities: { ...capabilities, nativeGrep: false },
  create: ({ files, dirs, links, readOnly }) => openSeeded({ files, dirs, links, readOnly }, { grep: 'js' }),
  removeRoot: async (fs) => rmSync((fs as HostFilesystem).root, { recursive: true }),
  cleanup: removeWorkspace,
});
