/**
 * Dependencies loaded on first use. A command that reads one UTF-8 file
 * should not pay for the legacy-encoding detectors, the regular-expression
 * engine or the lock library it never calls: each costs 10–55 ms to load,
 * and together they were most of `ctxfs cat --raw`'s start-up. ESM imports
 * are always eager, so the modules that need one of these take it through
 * {@link lazyModule}, which loads it synchronously (Node's `require`, which
 * also loads ES modules) the first time it is asked for.
 *
 * @module
 */

import { createRequire } from 'node:module';

/**
 * A getter that loads `specifier`, resolved from the module at `from`
 * (pass `import.meta.url`), the first time it is called, and returns the
 * same module ever after.
 *
 * @example
 * ```ts
 * const iconv = lazyModule<typeof import('iconv-lite')>('iconv-lite', import.meta.url);
 * iconv().encode('déjà', 'latin1');
 * ```
 */
export function lazyModule<T>(specifier: string, from: string | URL): () => T {
  let loaded: { readonly module: T } | undefined;
  return () => {
    loaded ??= { module: createRequire(from)(specifier) as T };
    return loaded.module;
  };
}
