import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function limitsSection(_ctx: SuiteContext): void {}
