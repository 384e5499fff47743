/**
 * What every language's oracle reports of one file.
 *
 * @module
 */

/** One definition as the language's own parser sees it (1-based lines). */
export interface OracleDefinition {
  /** Qualified by the definitions around it: `Outer.inner`. */
  readonly q: string;
  readonly name: string;
  readonly kind: string;
  /** First line: the first decorator, annotation, attribute or modifier (`export`), without comments. */
  readonly start: number;
  /** Last line of the definition. */
  readonly end: number;
}

/** A file as its oracle saw it. */
export interface OracleFile {
  readonly path: string;
  readonly defs?: readonly OracleDefinition[];
  /** Comments standing on their own lines, as [first line, last line]. */
  readonly comments?: ReadonlyArray<readonly [number, number]>;
  /** Set when the language's parser refused the file; such files are left out. */
  readonly error?: string;
}
