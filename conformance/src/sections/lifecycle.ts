import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function lifecycleSection(_ctx: SuiteContext): void {}
