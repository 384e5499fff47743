/**
 * A broken policy file names the file, the line and what is wrong, in every
 * form TOML allows — [tables], [[arrays of tables]], inline tables, dotted
 * keys, arrays over several lines — and a wait longer than a timer can make
 * is refused where it is written.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { createContext, parsePolicyFile } from '../src/index.ts';

const FILE = '.ctxfs/config.toml';

function failure(text: string): string {
  try {
    parsePolicyFile(text, FILE);
  } catch (err) {
    expect(err).toMatchObject({ code: 'EINVAL', path: FILE });
    return (err as { reason: string }).reason;
  }
  throw new Error(`parsed: ${text}`);
}

describe('every error of a policy file names its line', () => {
  it.each([
    [
      'a rule of an inline array',
      '[policy]\nmode = "auto"\nrules = [\n  { effect = "deny", paths = ["a"] },\n  { effect = "alow", paths = ["b"] },\n]\n',
      5,
      '"effect" must be one of',
    ],
    ['an unknown key of an inline rule', '[policy]\nrules = [ { effect = "deny", paths = ["a"], op = ["read"] } ]\n', 2, 'unknown key "op" in [policy.rules]'],
    [
      'an inline rule without effect',
      '[policy]\nrules = [\n  { effect = "deny", paths = ["a"] },\n  # the next one\n  { paths = ["b"] },\n]\n',
      5,
      'rule 2 has no "effect"',
    ],
    ['an inline budgets table', '[policy]\nmode = "auto"\nbudgets = { operations = -1 }\n', 3, '"operations" must be a whole number'],
    ['a dotted key at the top', 'policy.mode = "auto"\npolicy.read_only = "vendor/"\n', 2, '"read_only" must be an array of strings'],
    ['a dotted key in a table', '[policy]\nmode = "auto"\nbudgets.tokens = "many"\n', 3, '"tokens" must be a whole number'],
    ['an unknown table', '# my config\n\n[polcy]\nmode = "auto"\n', 3, 'unknown table or key "polcy"'],
    ['an unknown top-level key', 'title = "mine"\n[policy]\nmode = "auto"\n', 1, 'unknown table or key "title"'],
    ['a quoted key', '[policy]\n"mode" = "yolo"\n', 2, '"mode" must be one of'],
    [
      'a key after a multi-line string',
      '[[policy.rules]]\neffect = "deny"\npaths = ["a"]\nreason = """\nline one ] } [\nline two\n"""\nagents = "llm:*"\n',
      8,
      '"agents" must be an array of strings',
    ],
    [
      'the second [[policy.rules]]',
      '[[policy.rules]]\neffect = "deny"\npaths = ["a"]\n\n[[policy.rules]]\n# no effect here\npaths = ["b"]\n',
      5,
      'rule 2 has no "effect"',
    ],
    ['a value over several lines', '[policy]\nalways_ask = [\n  "delete",\n  "erase",\n]\n', 2, '"erase" is not an operation class'],
    ['[commands]', '[commands]\nallow = ["git status"]\ndefault = "maybe"\n', 3, '"default" must be one of'],
  ])('%s', (_name, text, line, message) => {
    const reason = failure(text);
    expect(reason).toMatch(new RegExp(`^line ${line}: `));
    expect(reason).toContain(message);
  });
});

describe('a wait longer than a timer can make', () => {
  // Node runs a timer past 2^31-1 ms after 1 ms: every question would be denied at once.
  it.each(['3000000', 'inf', '2147484', '0', '-5', 'nan'])('approval_timeout_seconds = %s is refused with the allowed range', (value) => {
    const reason = failure(`[policy]\nmode = "manual"\napproval_timeout_seconds = ${value}\n`);
    expect(reason).toBe('line 3: "approval_timeout_seconds" must be a number of seconds above 0 and at most 2,147,483 (about 24.8 days)');
  });

  it('the same for a command time limit', () => {
    expect(failure('[commands]\ntimeout_seconds = 1e9\n')).toMatch(/^line 2: "timeout_seconds" must be a number of seconds above 0 and at most 2,147,483/);
  });

  it('the longest allowed wait is read', () => {
    expect(parsePolicyFile('[policy]\napproval_timeout_seconds = 2147483\n', FILE).approvalTimeoutMs).toBe(2_147_483_000);
  });

  it('fails the open of a workspace whose file says so', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ctxfs-policy-file-'));
    try {
      mkdirSync(join(root, '.ctxfs'));
      writeFileSync(join(root, FILE), '[policy]\nmode = "manual"\napproval_timeout_seconds = 3000000\n');
      const fs = await HostFilesystem.open({ root });
      try {
        await expect(createContext({ fs, store: ':memory:', safety: { policyFiles: { userConfig: false } } })).rejects.toMatchObject({
          code: 'EINVAL',
          path: FILE,
          reason: expect.stringMatching(/^line 3: "approval_timeout_seconds" must be/),
        });
      } finally {
        await fs.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
