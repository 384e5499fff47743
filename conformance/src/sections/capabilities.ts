import type { SuiteContext } from '../context.ts';

/** TODO: being written. */
export function capabilitiesSection(_ctx: SuiteContext): void {}
