import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function textSection(_ctx: SuiteContext): void {}
