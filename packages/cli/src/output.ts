/**
 * Everything `ctxfs` writes: results on stdout, messages on stderr, one
 * JSON document on stdout with `--json`. Colour only where the stream is a
 * terminal and neither `NO_COLOR` nor `--no-color` says otherwise
 * (`util.styleText` checks the stream and the environment).
 *
 * @module
 */

import { styleText } from 'node:util';

type Style = Parameters<typeof styleText>[0];
type Stream = NodeJS.WriteStream;

/** `text` in `style` when `stream` shows colours, else as is. */
export function paint(style: Style, text: string, stream: Stream = process.stdout): string {
  return styleText(style, text, { stream });
}

/** A unified diff with its added, removed and hunk lines coloured (on a terminal). */
export function paintDiff(text: string, stream: Stream = process.stdout): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---')) return paint('bold', line, stream);
      if (line.startsWith('+')) return paint('green', line, stream);
      if (line.startsWith('-')) return paint('red', line, stream);
      if (line.startsWith('@@')) return paint('cyan', line, stream);
      return line;
    })
    .join('\n');
}

/** Writes to a stream, waiting when its buffer is full (a slow pipe). */
export async function write(stream: Stream, chunk: string | Uint8Array): Promise<void> {
  if (!stream.write(chunk)) await new Promise<void>((resolve) => stream.once('drain', resolve));
}

/** Writes `text` and a final newline to stdout. */
export function out(text: string): Promise<void> {
  return write(process.stdout, text.endsWith('\n') ? text : `${text}\n`);
}

/** The `--json` document: pretty-printed, one per run. */
export function outJson(value: unknown): Promise<void> {
  return write(process.stdout, `${JSON.stringify(value, null, 2)}\n`);
}

/** The JSON shape of every failure with `--json`. */
export interface ErrorJson {
  readonly error: { readonly code: string; readonly message: string; readonly hint?: string | undefined; readonly path?: string | undefined };
}

/** Says what failed: as `{error}` on stdout with `--json`, else on stderr. */
export async function reportError(err: { code: string; message: string; hint?: string | undefined; path?: string | undefined }, json: boolean): Promise<void> {
  if (json) {
    const body: ErrorJson = { error: { code: err.code, message: err.message, hint: err.hint, path: err.path } };
    await outJson(body);
    return;
  }
  const head = err.message.startsWith(`${err.code}:`) ? err.message : `${err.code}: ${err.message}`;
  const hint = err.hint && !head.includes(err.hint) ? `\n${paint('dim', err.hint, process.stderr)}` : '';
  await write(process.stderr, `${paint('red', 'ctxfs:', process.stderr)} ${head}${hint}\n`);
}

/** A note on stderr (never part of a result). */
export function note(text: string): Promise<void> {
  return write(process.stderr, `${paint('dim', `ctxfs: ${text}`, process.stderr)}\n`);
}
