/**
 * The per-suite context every section receives: the target, and a factory
 * that creates a seeded filesystem for one test and closes it afterwards.
 *
 * @module
 */

import type { Capabilities, Filesystem } from '@ctxfs/core';
import { afterEach, describe, it } from 'vitest';
import type { ConformanceTarget, FixtureInit } from './target.ts';

/** Handed to every section. */
export interface SuiteContext {
  readonly target: ConformanceTarget;
  readonly caps: Capabilities;
  /** A fresh filesystem for the current test, seeded as asked; closed after the test. */
  make(init?: FixtureInit): Promise<Filesystem>;
}

/** Builds the context; registers the after-each cleanup in the calling describe block. */
export function createContext(target: ConformanceTarget): SuiteContext {
  const open: Filesystem[] = [];
  afterEach(async () => {
    const all = open.splice(0);
    for (const fs of all) {
      await fs.close();
      await target.cleanup?.(fs);
    }
  });
  return {
    target,
    caps: target.capabilities,
    async make(init: FixtureInit = {}) {
      const fs = await target.create(init);
      open.push(fs);
      return fs;
    },
  };
}

/** Encodes text as UTF-8 bytes. */
export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Decodes UTF-8 bytes. */
export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/**
 * Collects an async iterable into an array. Byte chunks are copied: a
 * reader's chunk is lent only until the next one is requested.
 */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item instanceof Uint8Array ? (item.slice() as T) : item);
  return out;
}

/** Awaits `promise` and returns the code of the error it rejects with (or 'OK'). */
export async function codeOf(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<string> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
    return 'OK';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? code : `THROWN:${String(err)}`;
  }
}

/**
 * Registers a test only when `condition` holds. Capability-gated tests come
 * in complementary pairs (the full test when declared, the `EUNSUPPORTED`
 * check when not), so the half that does not apply is simply not registered
 * rather than reported as skipped.
 */
export function itWhen(condition: boolean): (name: string, fn: () => Promise<void> | void) => void {
  return condition ? (name, fn) => it(name, fn) : () => {};
}

/** {@link itWhen} for a whole block. */
export function describeWhen(condition: boolean): (name: string, fn: () => void) => void {
  return condition ? (name, fn) => describe(name, fn) : () => {};
}
