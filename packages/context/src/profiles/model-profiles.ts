/**
 * Model profiles: how much content one call and one session may serve. The
 * point is the small model — an 8k-context local model must never be handed
 * more than it can hold — without starving a 200k cloud model.
 *
 * @module
 */

/** Budgets for one kind of model. All figures are o200k tokens. */
export interface ModelProfile {
  readonly name: string;
  /** The model's context window. */
  readonly contextTokens: number;
  /** Most tokens one retrieval call may return. */
  readonly perCallTokens: number;
  /** Most tokens served over a whole session (the orchestrator rotates context within it). */
  readonly sessionTokens: number;
  /** Budget of the startup overview. */
  readonly overviewTokens: number;
  /** Budget of a file summary. */
  readonly summaryTokens: number;
  /** Default line count of an excerpt. */
  readonly excerptLines: number;
  /**
   * Most symbols listed in an outline: a ceiling only — an outline lists as
   * many as the call's budget holds, and that binds first in practice.
   */
  readonly outlineSymbols: number;
}

/**
 * The named profiles: `small` (≈8k local models), `medium` (≈32k) and
 * `large` (≈200k cloud models).
 *
 * @example
 * ```ts
 * MODEL_PROFILES.small.perCallTokens; // 1500
 * ```
 */
export const MODEL_PROFILES = {
  small: {
    name: 'small',
    contextTokens: 8192,
    perCallTokens: 1500,
    sessionTokens: 24_576,
    overviewTokens: 1500,
    summaryTokens: 200,
    excerptLines: 40,
    outlineSymbols: 200,
  },
  medium: {
    name: 'medium',
    contextTokens: 32_768,
    perCallTokens: 6000,
    sessionTokens: 131_072,
    overviewTokens: 4000,
    summaryTokens: 400,
    excerptLines: 80,
    outlineSymbols: 800,
  },
  large: {
    name: 'large',
    contextTokens: 200_000,
    perCallTokens: 32_000,
    sessionTokens: 1_000_000,
    overviewTokens: 12_000,
    summaryTokens: 800,
    excerptLines: 200,
    outlineSymbols: 5000,
  },
} as const satisfies Record<string, ModelProfile>;

/** A profile name, a full profile, or a named profile with overrides. */
export type ProfileInput = keyof typeof MODEL_PROFILES | ModelProfile | (Partial<ModelProfile> & { base: keyof typeof MODEL_PROFILES });

/**
 * Resolves a profile input to a full profile.
 *
 * @example
 * ```ts
 * resolveProfile({ base: 'small', perCallTokens: 1000 }).contextTokens; // 8192
 * ```
 */
export function resolveProfile(input: ProfileInput = 'large'): ModelProfile {
  if (typeof input === 'string') {
    const p = MODEL_PROFILES[input];
    if (!p) throw new TypeError(`unknown model profile '${String(input)}'; use small, medium or large`);
    return p;
  }
  if ('base' in input) {
    const { base, ...rest } = input;
    const p = MODEL_PROFILES[base];
    if (!p) throw new TypeError(`unknown model profile '${String(base)}'`);
    return { ...p, ...rest, name: rest.name ?? `${p.name}*` };
  }
  return input;
}
