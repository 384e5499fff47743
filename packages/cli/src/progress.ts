/**
 * A progress bar on stderr for long work (a scan, an index), drawn only when
 * stderr is a terminal and cleared when the work ends, so a pipe, a log file
 * or a JSON consumer never sees it. Drawn by cli-progress.
 *
 * @module
 */

import type { SingleBar } from 'cli-progress';

/** A bar to move and stop; a no-op when stderr is not a terminal. */
export interface Progress {
  update(value: number, total: number, phase: string): void;
  stop(): void;
}

const NONE: Progress = { update: () => undefined, stop: () => undefined };

/**
 * A bar titled `label`, or a no-op off a terminal.
 *
 * @example
 * ```ts
 * const bar = await progressBar('scan');
 * await ctx.scan({ onProgress: (p) => bar.update(p.checked, p.files, p.phase) });
 * bar.stop();
 * ```
 */
export async function progressBar(label: string): Promise<Progress> {
  if (process.stderr.isTTY !== true) return NONE;
  const { SingleBar, Presets } = await import('cli-progress');
  const bar: SingleBar = new SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} files | {phase}`,
      stream: process.stderr,
      clearOnComplete: true,
      hideCursor: true,
      barsize: 30,
      fps: 20,
    },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update(value, total, phase) {
      if (!started) {
        bar.start(Math.max(total, 1), value, { phase });
        started = true;
        return;
      }
      bar.setTotal(Math.max(total, 1));
      bar.update(value, { phase });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
