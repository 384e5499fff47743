import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function convenienceSection(_ctx: SuiteContext): void {}
