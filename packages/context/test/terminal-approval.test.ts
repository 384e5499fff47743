import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// A real terminal: tmux runs the prompt, send-keys types the answer, capture-pane reads the screen.
const HERE = import.meta.dirname;
const CHILD = join(HERE, 'support', 'approval-prompt.ts');
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux && process.env.CI) throw new Error('tmux is required in CI (bash .ci/system-deps.sh installs it)');

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

async function waitFor(session: string, text: RegExp, ms = 20_000): Promise<string> {
  const until = Date.now() + ms;
  let screen = '';
  while (Date.now() < until) {
    screen = tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);
    if (text.test(screen)) return screen;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${text} on the screen:\n${screen}`);
}

describe.runIf(hasTmux)('the terminal approver in a real terminal', () => {
  let base: string;
  let session: string | undefined;
  afterEach(() => {
    if (session) spawnSync('tmux', ['kill-session', '-t', session]);
    session = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  function start(): { root: string; session: string } {
    base = mkdtempSync(join(tmpdir(), 'ctxfs-tty-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.txt'), 'status: draft\n');
    session = `ctxfs-approval-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
    const command = `${JSON.stringify(process.execPath)} --conditions=ctxfs-source ${JSON.stringify(CHILD)} ${JSON.stringify(root)} ${JSON.stringify(join(base, 'state'))}; sleep 30`;
    tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '50', command);
    return { root, session };
  }

  it.each([
    ['y', /RESULT applied/, 'status: final\n'],
    ['n', /RESULT refused EDENIED: .*the user declined/, 'status: draft\n'],
  ])('shows the diff, then answers %s', { timeout: 60_000 }, async (key, result, content) => {
    const { root, session: s } = start();
    const screen = await waitFor(s, /Approve\? \[y\/N\]/);
    expect(screen).toContain('llm:tester asks to replace notes.txt');
    expect(screen).toContain('-status: draft');
    expect(screen).toContain('+status: final');
    tmux('send-keys', '-t', s, key, 'Enter');
    await waitFor(s, result);
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe(content);
  });

  it('never prompts when input is not a terminal: a pipe is refused at once', { timeout: 60_000 }, () => {
    base = mkdtempSync(join(tmpdir(), 'ctxfs-tty-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.txt'), 'status: draft\n');
    const r = spawnSync(process.execPath, ['--conditions=ctxfs-source', CHILD, root, join(base, 'state')], { input: 'y\n', encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout).toMatch(/RESULT refused EDENIED: .*input is not a terminal/);
    expect(r.stdout).not.toContain('Approve?');
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('status: draft\n');
  });
});
