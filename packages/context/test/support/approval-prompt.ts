/**
 * Child process of the terminal-approval test: a session whose policy asks
 * before every write, with the terminal approver, makes one write and prints
 * the outcome. argv: workspace root, host state dir.
 */
import { HostFilesystem } from '@ctxfs/host';
import { createContext, TerminalApprover } from '../../src/index.ts';
import { testState } from './test-state.ts';

const [root, stateDir] = process.argv.slice(2) as [string, string];
const fs = await HostFilesystem.open({ root, stateDir });
const ctx = await createContext({
  fs,
  store: testState(),
  agent: 'llm:tester',
  safety: { policyFiles: false, policy: { alwaysAsk: ['write'], approvalTimeoutMs: 60_000 }, approver: new TerminalApprover() },
});
const r = await ctx.replace('notes.txt', 'draft', 'final');
process.stdout.write(`\nRESULT ${r.success ? 'applied' : `refused ${r.code}: ${r.message}`}\n`);
ctx.close();
await fs.close();
