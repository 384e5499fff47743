/**
 * Preloaded with `--import` by the start-up and bundle tests: appends the URL
 * of every module the process resolves to the file `CTXFS_TRACE_MODULES`
 * names, and `worker:online` or `worker:error <message>` for each worker
 * thread it starts (a worker's modules load in the worker, out of the hooks'
 * sight; whether it came up is what tells its file was found).
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.CTXFS_TRACE_MODULES;
if (out !== undefined) {
  registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      appendFileSync(out, `${resolved.url}\n`);
      return resolved;
    },
  });
  process.on('worker', (worker) => {
    worker.once('online', () => appendFileSync(out, 'worker:online\n'));
    worker.once('error', (err) => appendFileSync(out, `worker:error ${err.message}\n`));
  });
}
