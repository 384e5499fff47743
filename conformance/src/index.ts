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

/** Registers the whole conformance suite for `target` in the current test file. */
export function describeFilesystemConformance(target: ConformanceTarget): void {
  describe(`conformance: ${target.name}`, () => {
    const ctx = createContext(target);
    for (const [name, section] of SECTIONS) {
      describe(name, () => section(ctx));
    }
  });
}
