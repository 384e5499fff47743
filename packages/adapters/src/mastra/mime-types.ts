/**
 * The MIME type Mastra's `LocalFilesystem` gives a file in `stat`
 * (`getMimeType` of `@mastra/core` 1.71, which it does not export). Mastra's
 * `read_file` tool decides by it: an image or a PDF is handed to the model as
 * media, a type it does not read as text (a font, an archive) is refused as
 * binary unless an encoding is asked for, and the rest is read as UTF-8 text.
 *
 * @module
 */

/** Mastra's types by extension (without its dot, lower case). */
const MIME_TYPES: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  md: 'text/markdown',
  js: 'application/javascript',
  mjs: 'application/javascript',
  ts: 'application/typescript',
  tsx: 'application/typescript',
  jsx: 'application/javascript',
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java',
  c: 'text/x-c',
  cpp: 'text/x-c++',
  h: 'text/x-c',
  hpp: 'text/x-c++',
  sh: 'text/x-sh',
  bash: 'text/x-sh',
  zsh: 'text/x-sh',
  toml: 'text/toml',
  ini: 'text/plain',
  env: 'text/plain',
  sql: 'text/x-sql',
  graphql: 'application/graphql',
  gql: 'application/graphql',
  vue: 'text/x-vue',
  svelte: 'text/x-svelte',
  scss: 'text/x-scss',
  sass: 'text/x-sass',
  less: 'text/x-less',
  php: 'application/x-php',
  swift: 'text/x-swift',
  kt: 'text/x-kotlin',
  kts: 'text/x-kotlin',
  dart: 'application/dart',
  lua: 'text/x-lua',
  r: 'text/x-r',
  tf: 'text/x-terraform',
  tfvars: 'text/x-terraform',
  mdx: 'text/markdown',
  sas: 'text/plain',
  log: 'text/plain',
  jsonl: 'application/jsonl',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
  ico: 'image/x-icon',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  tif: 'image/tiff',
  heic: 'image/heic',
  heif: 'image/heif',
  avif: 'image/avif',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  zip: 'application/zip',
  tar: 'application/x-tar',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  bz2: 'application/x-bzip2',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  exe: 'application/vnd.microsoft.portable-executable',
  dll: 'application/vnd.microsoft.portable-executable',
  so: 'application/x-sharedlib',
  dylib: 'application/x-sharedlib',
  bin: 'application/x-binary',
  dat: 'application/x-binary',
  dmg: 'application/x-apple-diskimage',
  iso: 'application/x-iso9660-image',
  deb: 'application/vnd.debian.binary-package',
  rpm: 'application/x-rpm',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff: 'font/woff',
  woff2: 'font/woff2',
  wasm: 'application/wasm',
  class: 'application/java-vm',
  pyc: 'application/x-python-code',
};

/**
 * The MIME type Mastra gives a file named `name`, by its extension as
 * `path.extname` reads it (none for `.env`, whose only dot leads):
 * `application/octet-stream` for any it does not know, which its tools read
 * as text.
 *
 * @example
 * ```ts
 * mimeTypeOf('logo.png');  // 'image/png'
 * mimeTypeOf('Makefile');  // 'application/octet-stream'
 * ```
 */
export function mimeTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
  return Object.hasOwn(MIME_TYPES, ext) ? (MIME_TYPES[ext] as string) : 'application/octet-stream';
}
