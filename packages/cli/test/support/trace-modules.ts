/**
 * Preloaded with `--import` by the start-up and bundle tests: appends the URL
 * of every module the process resolves to the file `CTXFS_TRACE_MODULES`
 * names, and `worker:online` or `worker:error <message>` for each worker
 * thread it starts (a worker's modules load in the worker, out of the hooks'
 * sight; whether it came up is what tells its file was found); and at exit,
 * `builtin:<id>` for each of Node's own modules loaded since (those taken
 * with `process.getBuiltinModule`, and what they load, pass no hook).
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.CTXFS_TRACE_MODULES;
if (out !== undefined) {
  // Undocumented but long-standing: what Node's own loader has loaded, in order.
  const moduleLoadList = (): readonly string[] => (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
  const before = new Set(moduleLoadList());
  process.on('exit', () => {
    const loaded = moduleLoadList().filter((m) => !before.has(m) && m.startsWith('NativeModule '));
    appendFileSync(out, loaded.map((m) => `builtin:${m.slice('NativeModule '.length)}\n`).join(''));
  });
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
