import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function concurrencySection(_ctx: SuiteContext): void {}
