import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function grepSection(_ctx: SuiteContext): void {}
