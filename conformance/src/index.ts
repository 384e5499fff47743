/**
 * `@ctxfs/conformance` — one vitest suite that every ctxfs backend runs
 * unchanged, in the style of unstorage's `testDriver` and OpenDAL's behavior
 * tests: a factory, the declared capabilities, and nothing skipped silently.
 *
 * @example
 * ```ts
 * // packages/mybackend/test/conformance.test.ts
 * import { describeFilesystemConformance } from '@ctxfs/conformance';
 * describeFilesystemConformance({
 *   name: 'mybackend',
 *   capabilities: MY_CAPABILITIES,
 *   create: async ({ files, dirs, readOnly }) => openSeeded(files, dirs, readOnly),
 * });
 * ```
 *
 * @module
 */

import { describe } from 'vitest';
import { createContext } from './context.ts';
import { SECTIONS } from './sections/index.ts';
import type { ConformanceTarget } from './target.ts';

export { codeOf, collect, type SuiteContext, text, utf8 } from './context.ts';
export * from './regex-catalogue.ts';
export type { ConformanceTarget, FixtureInit } from './target.ts';

/** Options of {@link describeFilesystemConformance}. */
export interface ConformanceOptions {
  /**
   * Only the sections so named (as the report names them, `'read with
   * stat'`): a variant of a backend that differs in one area (a default
   * path of the base class it skips) runs that area's sections, not all.
   */
  only?: readonly string[];
}

/** Registers the whole conformance suite (or the sections `only` names) for `target` in the current test file. */
export function describeFilesystemConformance(target: ConformanceTarget, options: ConformanceOptions = {}): void {
  const unknown = options.only?.filter((name) => !SECTIONS.some(([s]) => s === name)) ?? [];
  if (unknown.length > 0) throw new Error(`no conformance section is named ${unknown.map((n) => `'${n}'`).join(', ')}`);
  describe(`conformance: ${target.name}`, () => {
    const ctx = createContext(target);
    for (const [name, section] of SECTIONS) {
      if (options.only === undefined || options.only.includes(name)) describe(name, () => section(ctx));
    }
  });
}
