/**
 * Preloaded with `--import` by the start-up test: appends the URL of every
 * module the process resolves to the file `CTXFS_TRACE_MODULES` names.
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
}
