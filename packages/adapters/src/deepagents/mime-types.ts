/**
 * The MIME types deepagents gives a path (`getMimeType` of deepagents
 * 1.14, which it does not export), and which of them it reads as text.
 * Its tools decide by them: `write_file` content for a path whose type is
 * not text arrives base64-encoded (its `FilesystemBackend` stores the
 * decoded bytes), and `read_file` hands such a file to the model as media.
 *
 * @module
 */

/** deepagents' types by extension, those other than its default `text/plain`. */
const MIME_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.aiff': 'audio/aiff',
  '.aac': 'audio/aac',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mpeg': 'video/mpeg',
  '.mov': 'video/quicktime',
  '.avi': 'video/x-msvideo',
  '.flv': 'video/x-flv',
  '.mpg': 'video/mpeg',
  '.wmv': 'video/x-ms-wmv',
  '.3gpp': 'video/3gpp',
  '.pdf': 'application/pdf',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.xml': 'text/xml',
  '.json': 'application/json',
  '.js': 'application/javascript',
  '.mjs': 'application/javascript',
  '.cjs': 'application/javascript',
};

/**
 * The MIME type deepagents gives `path`, by the extension of its last name
 * (none for a name that starts with its only dot, `.env`): `text/plain`
 * for any it does not know.
 *
 * @example
 * ```ts
 * mimeTypeOf('/slides/q3.pptx'); // 'application/vnd.openxmlformats-officedocument.presentationml.presentation'
 * mimeTypeOf('/src/a.ts');       // 'text/plain'
 * ```
 */
export function mimeTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? 'text/plain' : (MIME_TYPES[name.slice(dot).toLowerCase()] ?? 'text/plain');
}

/** Whether deepagents reads content of this type as text (its `isTextMimeType`); the others are media, sent base64. */
export const isTextMimeType = (mimeType: string): boolean =>
  mimeType.startsWith('text/') || mimeType === 'application/json' || mimeType === 'application/javascript' || mimeType === 'image/svg+xml';
