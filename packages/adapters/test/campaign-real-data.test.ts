/**
 * What a campaign on real data (CKEditor's gettext catalogues in Japanese,
 * Russian and Chinese, stored as Shift_JIS, KOI8-R and UTF-16 with a BOM;
 * fonts, images and slides) found through the frameworks' own tools, on
 * memory, host and container: the types their tools decide by, text read
 * and edited in the file's own encoding, and listings in their order.
 */

import { mkdtemp, rm, writeFile as writeHostFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeText } from '@ctxfs/core';
import { editFileTool, FilesystemError, readFileTool, Workspace } from '@mastra/core/workspace';
import { FilesystemBackend } from 'deepagents';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxSession } from '../src/ai-sdk/index.ts';
import { CtxfsBackend } from '../src/deepagents/index.ts';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { backends, cleanUp, hex, openWorkspace, type TestWorkspace } from './workspaces.ts';

afterAll(cleanUp);

/** Lines of ckeditor5-table 39.0.0's lang/translations/ja.po. */
const JA = `"Language: ja\\n"

msgctxt "Label for the insert table toolbar button."
msgid "Insert table"
msgstr "表の挿入"

msgctxt "Label for the set/unset table header column button."
msgid "Header column"
msgstr "見出し列"

msgctxt "Label for the insert table column to the left of the current one button."
msgid "Insert column left"
msgstr "左に列を挿入"
`;
/** Lines of its ru.po. */
const RU = `"Language: ru\\n"

msgctxt "Label for the insert table toolbar button."
msgid "Insert table"
msgstr "Вставить таблицу"

msgctxt "Label for the set/unset table header column button."
msgid "Header column"
msgstr "Столбец заголовков"

msgctxt "Label for the insert table column to the left of the current one button."
msgid "Insert column left"
msgstr "Вставить столбец слева"
`;
/** Lines of its zh.po. */
const ZH = `"Language: zh_TW\\n"

msgctxt "The label used by assistive technologies describing a table toolbar attached to a table widget."
msgid "Table toolbar"
msgstr "表格工具"

msgctxt "The label describing the form allowing to specify the properties of a selected table."
msgid "Table properties"
msgstr "表格屬性"
`;
const UTF16_BOM = new Uint8Array([0xff, 0xfe]);
const utf16 = (text: string): Uint8Array => Buffer.concat([UTF16_BOM, encodeText(text, 'utf-16le')]);

/** The head of a PNG, of a WOFF2 font and of a PPTX (a zip): what a model must get as media or bytes, never as text. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
const WOFF2 = new Uint8Array([0x77, 0x4f, 0x46, 0x32, 0, 1, 0, 0, 0, 0, 0x12, 0xbc, 0, 0x0a, 0, 0, 0, 0, 0x27, 0x17]);
const PPTX = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0x06, 0, 0x08, 0, 0, 0, 0x21, 0, 0xff, 0xfe, 0x80, 0x90]);

const tree = {
  'po/ja.po': encodeText(JA, 'shift_jis'),
  'po/ru.po': encodeText(RU, 'koi8-r'),
  'po/zh.po': utf16(ZH),
  'img/logo.png': PNG,
  'fonts/fa.woff2': WOFF2,
  'src/a.ts': 'export const a = 1;\n',
  'docs/README.md': '# Docs\n',
};

for (const backend of await backends()) {
  describe(`real data through the frameworks' tools on ${backend}`, { timeout: 60_000 }, () => {
    const withWorkspace = async (fn: (ws: TestWorkspace) => Promise<void>) => {
      const ws = await openWorkspace(backend, tree);
      try {
        await fn(ws);
      } finally {
        await ws.close();
      }
    };
    const mastra = async (ws: TestWorkspace) => {
      const filesystem = new CtxfsWorkspaceFilesystem({ context: ws.context });
      const workspace = new Workspace({ filesystem });
      await workspace.init();
      return { filesystem, context: { workspace } as never };
    };

    it("Mastra: stat gives LocalFilesystem's MIME type, so its read_file tool hands an image over as media and refuses a font as binary", () =>
      withWorkspace(async (ws) => {
        const { filesystem, context } = await mastra(ws);
        expect((await filesystem.stat('/img/logo.png')).mimeType).toBe('image/png');
        expect((await filesystem.stat('/fonts/fa.woff2')).mimeType).toBe('font/woff2');
        expect((await filesystem.stat('/src/a.ts')).mimeType).toBe('application/typescript');
        expect((await filesystem.stat('/src')).mimeType).toBeUndefined();
        const image = await readFileTool.execute?.({ path: '/img/logo.png' }, context);
        expect(image).toMatchObject({ __workspaceMedia: true, mediaType: 'image/png', data: Buffer.from(PNG).toString('base64') });
        expect(String(await readFileTool.execute?.({ path: '/fonts/fa.woff2' }, context))).toContain('binary file not readable as text');
      }));

    it('Mastra: text read as UTF-8 is the file’s text in its own encoding, and its edit_file tool edits it there', () =>
      withWorkspace(async (ws) => {
        const { filesystem, context } = await mastra(ws);
        for (const [path, text, encode] of [
          ['po/ja.po', JA, (t: string) => encodeText(t, 'shift_jis')],
          ['po/ru.po', RU, (t: string) => encodeText(t, 'koi8-r')],
          ['po/zh.po', ZH, utf16],
        ] as const) {
          expect(await filesystem.readFile(`/${path}`, { encoding: 'utf-8' })).toBe(text);
          expect(hex((await filesystem.readFile(`/${path}`)) as Buffer)).toBe(hex(encode(text))); // bytes stay bytes
          const shown = String(await readFileTool.execute?.({ path: `/${path}` }, context));
          expect(shown).toContain(text.split('\n')[4]);
          const edited = await editFileTool.execute?.({ path: `/${path}`, old_string: 'msgid "Insert table"', new_string: 'msgid "Insert a table"' }, context);
          const expected = text.replace('msgid "Insert table"', 'msgid "Insert a table"');
          if (text.includes('msgid "Insert table"')) expect(String(edited)).toContain('Replaced 1 occurrence');
          expect(hex(await ws.fs.readBytes(path))).toBe(hex(encode(expected)));
        }
      }));

    it('Mastra: appendFile of text adds it in the file’s own encoding; text that encoding cannot hold is refused, nothing written', () =>
      withWorkspace(async (ws) => {
        const { filesystem } = await mastra(ws);
        const line = 'msgstr "Удалить столбец"\n';
        await filesystem.appendFile('/po/ru.po', line);
        expect(hex(await ws.fs.readBytes('po/ru.po'))).toBe(hex(encodeText(RU + line, 'koi8-r')));
        await filesystem.appendFile('/po/zh.po', 'msgstr "儲存格屬性"\n');
        expect(hex(await ws.fs.readBytes('po/zh.po'))).toBe(hex(utf16(`${ZH}msgstr "儲存格屬性"\n`)));
        const err = await filesystem.appendFile('/po/ru.po', 'msgstr "表格"\n').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FilesystemError);
        expect((err as FilesystemError).code).toBe('EINVAL');
        expect((err as Error).message).toContain('koi8-r');
        expect(hex(await ws.fs.readBytes('po/ru.po'))).toBe(hex(encodeText(RU + line, 'koi8-r')));
        await filesystem.appendFile('/src/a.ts', 'export const b = "表";\n'); // UTF-8 stays UTF-8
        expect(new TextDecoder().decode(await ws.fs.readBytes('src/a.ts'))).toBe('export const a = 1;\nexport const b = "表";\n');
      }));

    /** The call a refusal names as the next step, as `name({...})`: its arguments, so the test makes it. */
    const nextCall = (message: string, name: string): Record<string, unknown> => {
      expect(message).not.toContain('readLines(');
      const at = message.indexOf(`${name}({`);
      expect(at, message).toBeGreaterThanOrEqual(0);
      const open = at + name.length + 1;
      return JSON.parse(message.slice(open, message.indexOf('})', open) + 1)) as Record<string, unknown>;
    };
    /** A copy of the translation for one framework, and the change of its line 5 (the msgstr) made behind the agent's back. */
    const copyOf = async (ws: TestWorkspace, path: string): Promise<() => Promise<void>> => {
      await ws.fs.writeBytes(path, encodeText(RU, 'koi8-r'));
      return () => ws.fs.writeBytes(path, encodeText(RU.replace('Вставить таблицу', 'Вставка таблицы'), 'koi8-r')).then(() => undefined);
    };
    const mine = RU.replace('Вставить таблицу', 'Добавить таблицу');

    it('each framework is told to re-read a conflict with its own call, and that call reads the lines', () =>
      withWorkspace(async (ws) => {
        const sandbox = createSandboxSession({ context: ws.context });
        let otherChange = await copyOf(ws, 'po/ai.po');
        await sandbox.readTextFile({ path: 'po/ai.po' });
        await otherChange();
        const ai = String(await Promise.resolve(sandbox.writeTextFile({ path: 'po/ai.po', content: mine })).catch((e: Error) => e.message));
        expect(await sandbox.readTextFile(nextCall(ai, 'readTextFile') as { path: string })).toBe('msgstr "Вставка таблицы"');

        const b = new CtxfsBackend({ context: ws.context, mountPath: '/workspace' });
        otherChange = await copyOf(ws, 'po/da.po');
        await b.read('/workspace/po/da.po');
        await otherChange();
        const da = String((await b.write('/workspace/po/da.po', mine)).error);
        const read = nextCall(da, 'read_file') as { file_path: string; offset: number; limit: number };
        expect(await b.read(read.file_path, read.offset, read.limit)).toMatchObject({ content: 'msgstr "Вставка таблицы"' });

        const { filesystem, context } = await mastra(ws);
        otherChange = await copyOf(ws, 'po/ma.po');
        await filesystem.readFile('/po/ma.po', { encoding: 'utf-8' });
        await otherChange();
        const ma = String(await filesystem.writeFile('/po/ma.po', mine).catch((e: Error) => e.message));
        expect(String(await readFileTool.execute?.(nextCall(ma, 'mastra_workspace_read_file') as never, context))).toContain('msgstr "Вставка таблицы"');
      }));

    it("deepagents: a write of a kind its write tool sends base64 (slides, video, audio) stores the bytes, and read reports deepagents' type", () =>
      withWorkspace(async (ws) => {
        const b = new CtxfsBackend({ context: ws.context });
        const base64 = Buffer.from(PPTX).toString('base64');
        for (const path of ['/deck.pptx', '/old.ppt', '/clip.avi', '/clip.mpeg', '/clip.wmv', '/voice.aiff']) {
          expect(await b.write(path, base64)).toEqual({ path, filesUpdate: null });
          expect(hex(await ws.fs.readBytes(path.slice(1)))).toBe(hex(PPTX));
        }
        expect(await b.read('/deck.pptx')).toMatchObject({ mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' });
        expect(await b.read('/docs/README.md')).toMatchObject({ content: '# Docs\n', mimeType: 'text/markdown' });
        expect((await b.readRaw('/src/a.ts')).data).toMatchObject({ content: 'export const a = 1;\n', mimeType: 'text/plain' });
        // An SVG is text to deepagents: written as given, read as text.
        expect(await b.write('/img/icon.svg', '<svg/>\n')).toEqual({ path: '/img/icon.svg', filesUpdate: null });
        expect(await b.read('/img/icon.svg')).toMatchObject({ content: '<svg/>\n', mimeType: 'image/svg+xml' });
        // Bytes under a text type are bytes of no type deepagents can name.
        expect(await b.read('/fonts/fa.woff2')).toMatchObject({ mimeType: 'application/octet-stream' });
      }));

    it("deepagents: ls lists in FilesystemBackend's order, as its glob does", () =>
      withWorkspace(async (ws) => {
        const b = new CtxfsBackend({ context: ws.context });
        for (const name of ['CHANGELOG.md', 'changelog.old', 'Zeta.txt', 'alpha.txt']) await b.write(`/docs/${name}`, 'x\n');
        const listed = (await b.ls('/docs')).files?.map((f) => f.path);
        const dir = await mkdtemp(join(tmpdir(), 'ctxfs-deepagents-order-'));
        try {
          for (const name of ['README.md', 'CHANGELOG.md', 'changelog.old', 'Zeta.txt', 'alpha.txt']) await writeHostFile(join(dir, name), 'x\n');
          const own = new FilesystemBackend({ rootDir: dir, virtualMode: true });
          expect(listed).toEqual((await own.ls('/')).files?.map((f) => `/docs${f.path}`));
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }));
  });
}
