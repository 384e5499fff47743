import { MemoryFilesystem } from '@ctxfs/memory';
import { expect, test } from 'vitest';

test('smoke', async () => {
  const fs = new MemoryFilesystem({ files: { 'a.txt': 'x' } });
  expect((await fs.readBytes('a.txt')).length).toBe(1);
});
