/**
 * The ordered list of conformance sections. Each section is a function that
 * registers its tests with vitest for one backend.
 *
 * @module
 */

import type { SuiteContext } from '../context.ts';

/** A section registers tests for one area of the protocol. */
export type Section = (ctx: SuiteContext) => void;

/** Every section, in report order. */
export const SECTIONS: ReadonlyArray<readonly [string, Section]> = [];
