import { describeFilesystemConformance } from '@ctxfs/conformance';
import { findRipgrep } from '@ctxfs/host';
import { openSeeded, removeWorkspace } from './helpers.ts';

const probe = await openSeeded({});
const capabilities = probe.capabilities;
await probe.close();
await removeWorkspace(probe);

describeFilesystemConformance({
  name: findRipgrep() ? 'host (ripgrep)' : 'host (no rg on PATH)',
  capabilities,
  create: ({ files, dirs, links, readOnly }) => openSeeded({ files, dirs, links, readOnly }),
  cleanup: removeWorkspace,
});

describeFilesystemConformance({
  name: 'host (JS scanner)',
  capabilities: { ...capabilities, nativeGrep: false },
  create: ({ files, dirs, links, readOnly }) => openSeeded({ files, dirs, links, readOnly }, { grep: 'js' }),
  cleanup: removeWorkspace,
});
