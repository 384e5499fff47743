/**
 * A real terminal for the CLI tests: tmux on a socket of its own runs
 * `ctxfs` in a pane, send-keys types, capture-pane reads the screen (with
 * `-e`, its colours), and pipe-pane keeps every byte written, so a progress
 * bar that was drawn and then cleared can be seen in the record.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, type Project } from './cli.ts';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux && process.env.CI) throw new Error('tmux is required in CI (bash .ci/system-deps.sh installs it)');

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** One tmux session running one command line. */
export class Terminal {
  readonly #socket: string;
  readonly #name = 'cli';
  readonly #record: string;

  private constructor(socket: string, record: string) {
    this.#socket = socket;
    this.#record = record;
  }

  /**
   * Opens a 120×40 terminal in the project that waits for Enter, then runs
   * `ctxfs args…` and prints `EXIT=<code>`; everything written to it is
   * recorded from the start.
   */
  static open(project: Project, args: readonly string[], env: Readonly<Record<string, string>> = {}): Terminal {
    const socket = `ctxfs-cli-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
    const record = join(project.base, `${socket}.log`);
    const vars = { XDG_CONFIG_HOME: project.env.XDG_CONFIG_HOME ?? '', XDG_STATE_HOME: project.env.XDG_STATE_HOME ?? '', ...env };
    const assignments = Object.entries(vars).map(([k, v]) => `${k}=${quote(v)}`);
    const line = `read go; env -u NO_COLOR -u FORCE_COLOR ${assignments.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo EXIT=$?; sleep 120`;
    const t = new Terminal(socket, record);
    t.#tmux('new-session', '-d', '-s', t.#name, '-x', '120', '-y', '40', '-c', project.root, `sh -c ${quote(line)}`);
    t.#tmux('pipe-pane', '-o', '-t', t.#name, `cat >> ${quote(record)}`);
    t.keys('Enter');
    return t;
  }

  #tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.#socket, ...args], { encoding: 'utf8' });
  }

  /** The screen's text (`colours`: with its escape sequences). */
  screen(colours = false): string {
    return this.#tmux('capture-pane', '-p', '-J', ...(colours ? ['-e'] : []), '-t', this.#name);
  }

  /** Every byte the command wrote, drawn and erased alike. */
  recorded(): string {
    return existsSync(this.#record) ? readFileSync(this.#record, 'utf8') : '';
  }

  /** Types keys (tmux key names: 'y', 'Enter'). */
  keys(...keys: string[]): void {
    this.#tmux('send-keys', '-t', this.#name, ...keys);
  }

  /** Waits until the screen shows `text`; returns the screen. */
  async waitFor(text: RegExp, ms = 30_000): Promise<string> {
    const until = Date.now() + ms;
    let screen = '';
    while (Date.now() < until) {
      screen = this.screen();
      if (text.test(screen)) return screen;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${text} on the screen:\n${screen}`);
  }

  /** Waits for the command to end and returns its exit code. */
  async exitCode(ms?: number): Promise<number> {
    const screen = await this.waitFor(/EXIT=\d+/, ms);
    return Number(/EXIT=(\d+)/.exec(screen)?.[1]);
  }

  close(): void {
    spawnSync('tmux', ['-L', this.#socket, 'kill-server']);
  }
}
