import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function fuzzSection(_ctx: SuiteContext): void {}
