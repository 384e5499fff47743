import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function readOnlySection(_ctx: SuiteContext): void {}
