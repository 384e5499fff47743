/**
 * The quickstart: an agent-style session over the in-memory backend.
 * Run with `pnpm demo`.
 */
import { isFsError } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';

const fs = new MemoryFilesystem({
  files: {
    'README.md': '# demo project\n',
    'src/math.ts': 'export function add(a: number, b: number) {\n  return a + b;\n}\n',
    'src/main.ts': "import { add } from './math.ts';\nconsole.log(add(2, 3));\n",
  },
});

console.log('files:');
for await (const match of fs.glob('**/*', { kind: 'file' })) console.log(`  ${match.path}`);

console.log('\ngrep "add":');
for await (const m of fs.grep('add', { glob: '*.ts' })) console.log(`  ${m.path}:${m.line}:${m.matchStart + 1}: ${m.text}`);

const before = await fs.snapshot('before-edit');
await fs.write('src/math.ts', 'export const broken = ;\n');
console.log('\nafter a bad edit:', (await fs.read('src/math.ts')).text);
await fs.restore(before);
console.log('restored:        ', (await fs.read('src/math.ts')).lines[0]);

try {
  await fs.read('../../etc/passwd');
} catch (err) {
  if (isFsError(err)) console.log(`\nrefused: ${err.code} — ${err.hint}`);
}
