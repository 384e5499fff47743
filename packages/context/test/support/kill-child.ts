/**
 * The crash campaigns' one step: start a child script, wait until it says
 * it is ready (its first output), let it work for a random while, then
 * SIGKILL it and wait until it is gone.
 */
import { spawn } from 'node:child_process';

/**
 * Runs `script` with `args` under Node (sources loaded as the tests load
 * them) and kills it `minMs`..`minMs + spreadMs` after it is ready.
 */
export async function runAndKill(script: string, args: readonly string[], timing: { minMs: number; spreadMs: number }, env?: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, ['--conditions=ctxfs-source', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
  });
  await new Promise((r) => setTimeout(r, timing.minMs + Math.floor(Math.random() * timing.spreadMs)));
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
