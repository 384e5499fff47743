import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function copySection(_ctx: SuiteContext): void {}
