import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function pathsSection(_ctx: SuiteContext): void {}
