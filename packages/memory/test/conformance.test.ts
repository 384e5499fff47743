import { describeFilesystemConformance } from '@ctxfs/conformance';
import { MemoryFilesystem } from '@ctxfs/memory';

describeFilesystemConformance({
  name: 'memory',
  capabilities: new MemoryFilesystem().capabilities,
  create: async ({ files, dirs, readOnly }) => new MemoryFilesystem({ files, dirs, readOnly }),
});
