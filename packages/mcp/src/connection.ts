/**
 * One client's MCP server: the tool set generated from `@ctxfs/tools`, the
 * overview and files as resources (with path completion and updates to
 * subscribers when ctxfs changes a file), roots, logging, progress while a
 * call waits for the first scan, cancellation, and approvals through the
 * client's elicitation. Every client gets its own session: its own agent
 * name, profile, reads and budget.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import type { ContextSession } from '@ctxfs/context';
import type { AnyToolDefinition, CallResult, Toolset } from '@ctxfs/tools';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type ProgressToken,
  ReadResourceRequestSchema,
  type RequestId,
  RootsListChangedNotificationSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { elicitationApprover } from './elicitation.ts';
import { type RootScope, rootScope, withinRoots } from './roots.ts';
import type { McpToolEntry } from './tool-list/tool-list.ts';
import committedToolList from './tool-list/tools.json' with { type: 'json' };
import type { McpWorkspace } from './workspace.ts';

const TOOL_LIST = committedToolList as McpToolEntry[];

/** The server's name and version in `initialize`. */
export const SERVER_INFO = { name: 'ctxfs', version: '0.1.0' } as const;

/** The overview resource. */
export const OVERVIEW_URI = 'ctxfs://overview';
/** Files, as a resource template (RFC 6570: `+` keeps the slashes of a path). */
export const FILE_TEMPLATE = 'ctxfs://files/{+path}';
const FILE_PREFIX = 'ctxfs://files/';

/** A file's resource URI. */
export function fileUri(path: string): string {
  return `${FILE_PREFIX}${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The workspace path a file's resource URI names, or undefined for another URI. */
export function filePathOf(uri: string): string | undefined {
  return uri.startsWith(FILE_PREFIX) ? uri.slice(FILE_PREFIX.length).split('/').map(decodeURIComponent).join('/') : undefined;
}

/** The tool call being run, in the code it runs: an approval it needs is asked with it. */
const runningCall = new AsyncLocalStorage<RequestId>();

/** Completions offered at most. */
const MAX_COMPLETIONS = 100;

/**
 * The `_meta` key under which a client names a tool call for its retries:
 * `{"_meta": {"ctxfs/requestId": "<uuid>"}}` on `tools/call`. The same id on
 * a retry (after a lost answer, a dropped connection, a timeout) makes no
 * change twice: the retry answers with the change made before.
 */
export const REQUEST_ID_META = 'ctxfs/requestId';

/** The request id a call's `_meta` names, `undefined` when none, or the reason it is not one. */
function clientRequestId(meta: Record<string, unknown> | undefined): string | undefined | Error {
  const id = meta?.[REQUEST_ID_META];
  if (id === undefined) return undefined;
  if (typeof id === 'string' && id.length > 0 && id.length <= 200 && !/\p{Cc}/u.test(id)) return id;
  return new Error(
    `_meta["${REQUEST_ID_META}"] must be a string of 1 to 200 characters without control characters (one UUID per call, the same on its retries). Nothing was run.`,
  );
}

const instructions = (ws: McpWorkspace): string =>
  `ctxfs serves ${ws.description} to you within your context budget. Start with project_overview; find code with grep and find_symbol; read narrowly with get_outline, get_symbol and read_lines; edit with replace, edit_lines or apply_patch (edits are checked against the version you read and merged when the file changed since); get_file_history and undo reverse a change. Every result that leaves something out names the exact call that shows it.`;

/** Options of {@link createConnection}. */
export interface ConnectionOptions {
  /**
   * Whether the transport carries a request from the server at any time
   * (stdio: the client's roots are asked for as soon as it has initialized),
   * or only within a call the client made (Streamable HTTP, whose client
   * may never open its GET stream: the roots are asked for on the first
   * call's own response stream). Default `'anytime'`.
   */
  serverRequests?: 'anytime' | 'within-calls';
}

/**
 * Creates the MCP server for one client connection over `workspace`.
 *
 * @example
 * ```ts
 * const workspace = McpWorkspace.open({ backend: { kind: 'host', root: '/repo' } });
 * const server = createConnection(workspace);
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createConnection(workspace: McpWorkspace, options: ConnectionOptions = {}): Server {
  const eagerRoots = (options.serverRequests ?? 'anytime') === 'anytime';
  // The tool set (and the context layer under it) loads after the server is
  // listening: initialize is answered without it.
  let loaded: Promise<{ module: typeof import('@ctxfs/tools'); tools: readonly AnyToolDefinition[] }> | undefined;
  const toolsModule = () =>
    (loaded ??= import('@ctxfs/tools').then((module) => ({ module, tools: workspace.options.readOnly ? module.READ_TOOLS : module.TOOLS })));
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
      completions: {},
      logging: {},
    },
    instructions: instructions(workspace),
  });
  const subscriptions = new Set<string>();
  const notify = (uri: string): void => {
    server.sendResourceUpdated({ uri }).catch(() => undefined);
  };
  let toolset: Toolset | undefined;
  let scope: RootScope = { kind: 'all' };
  // Asked for once, then again after the client says they changed; `undefined` until asked.
  let rootsLoaded: Promise<void> | undefined;

  const log = (level: 'info' | 'warning' | 'error', data: string): void => {
    server.sendLoggingMessage({ level, logger: 'ctxfs', data }).catch(() => undefined);
  };

  /** Lists the client's roots, on the response stream of `requestId` when one is given. */
  const loadRoots = async (requestId?: RequestId): Promise<void> => {
    const listRoots = () => server.listRoots(undefined, requestId === undefined ? undefined : { relatedRequestId: requestId });
    const canList = server.getClientCapabilities()?.roots !== undefined;
    if (workspace.awaitingRoot) {
      // Started without a directory: the first client's first file root is the workspace.
      let first: string | undefined;
      if (canList) {
        try {
          const { roots } = await listRoots();
          first = roots.map((r) => r.uri).find((uri) => uri.startsWith('file://'));
        } catch (err) {
          log('warning', `could not list the client's roots: ${(err as Error).message}`);
        }
      }
      const dir = first === undefined ? process.cwd() : fileURLToPath(first);
      if (first === undefined) log('warning', `the client names no root directory; serving the server's working directory ${dir}`);
      workspace.provideRoot(dir);
    }
    const root = workspace.hostRoot;
    if (root === undefined || !canList) return;
    try {
      const { roots } = await listRoots();
      scope = rootScope(
        root,
        roots.map((r) => r.uri),
      );
      if (scope.kind !== 'all')
        log('warning', `client roots limit what is served: ${scope.kind === 'some' ? scope.dirs.join(', ') : 'nothing of this workspace'}`);
    } catch (err) {
      log('warning', `could not list the client's roots (${(err as Error).message}); serving the whole workspace`);
    }
  };
  /** The client's roots, asked for now unless they were (within the call `requestId`, where the transport needs it). */
  const rootsReady = (requestId?: RequestId): Promise<void> => (rootsLoaded ??= loadRoots(requestId));
  server.oninitialized = () => {
    if (eagerRoots) void rootsReady();
  };
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    rootsLoaded = undefined;
    if (eagerRoots) void rootsReady();
  });

  /** The client's session, once the first scan is done; `call`, the request that waits for it, is told the scan's progress. */
  const session = async (call: { signal: AbortSignal; requestId: RequestId; _meta?: { progressToken?: ProgressToken } | undefined }): Promise<Toolset> => {
    const { signal } = call;
    const progressToken = call._meta?.progressToken;
    if (toolset !== undefined) return toolset;
    if (workspace.context === undefined) log('info', 'waiting for the first scan of the workspace');
    // MCP requires each progress value to exceed the one before. The scan walks and hashes at once, so its
    // progress is the work done of both (files statted plus files hashed), out of both once the walk has ended.
    let reported = -1;
    const ctx = await workspace.ready({
      signal,
      onProgress:
        progressToken === undefined
          ? undefined
          : (p) => {
              const progress = p.checked + p.hashed;
              if (progress <= reported) return;
              reported = progress;
              server
                .notification(
                  {
                    method: 'notifications/progress',
                    params: {
                      progressToken,
                      progress,
                      ...(p.toHash !== undefined ? { total: p.checked + p.toHash } : {}),
                      message: `scanning the workspace: ${p.phase}, ${p.files} files`,
                    },
                  },
                  // On Streamable HTTP, with the call's own response: a client need not open the GET stream at all.
                  { relatedRequestId: call.requestId },
                )
                .catch(() => undefined);
            },
    });
    const { module, tools } = await toolsModule();
    if (toolset !== undefined) return toolset;
    const client = server.getClientVersion()?.name;
    const opened: ContextSession = ctx.session({
      agent: `mcp:${client ?? 'client'}`,
      profile: workspace.profileOf(client),
    });
    // A question is a form (the diff and a yes or no): a client that elicits only by URL cannot answer one.
    // (The SDK reads a bare `elicitation: {}`, as clients declared it before modes, as forms.)
    if (server.getClientCapabilities()?.elicitation?.form !== undefined)
      workspace.approver.route(
        opened.sessionContext.id,
        elicitationApprover(server, client ?? 'mcp-client', () => runningCall.getStore()),
      );
    toolset = new module.Toolset(opened, { tools });
    return toolset;
  };

  server.onclose = () => {
    if (toolset !== undefined) workspace.approver.unroute(toolset.session.sessionContext.id);
    for (const uri of subscriptions) workspace.unsubscribe(uri, notify);
  };

  // Answered from the committed list (generated from the definitions, held equal by a test): the tool set need not have loaded.
  server.setRequestHandler(ListToolsRequestSchema, () => {
    // A call comes next: the load starts once this answer is on its way (setImmediate runs after the SDK's send).
    setImmediate(() => workspace.start());
    return { tools: workspace.options.readOnly ? TOOL_LIST.filter((t) => t.annotations.readOnlyHint) : TOOL_LIST };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    // Before the session: a workspace that waits for its root learns it from the roots.
    await rootsReady(extra.requestId);
    let set: Toolset;
    try {
      set = await session(extra);
    } catch (err) {
      if (extra.signal.aborted)
        return { content: [{ type: 'text', text: `ECANCELED: ${name} was cancelled while the workspace was being scanned.` }], isError: true };
      return { content: [{ type: 'text', text: `EUNAVAILABLE: the workspace could not be opened: ${(err as Error).message}` }], isError: true };
    }
    const tool = set.get(name);
    const raw = request.params.arguments ?? {};
    // Roots are checked on the arguments as the tool will read them, aliases resolved; arguments it will refuse are checked as sent.
    const prepared = tool === undefined || scope.kind === 'all' ? undefined : (await toolsModule()).module.prepareArguments(tool, raw);
    const checked = prepared?.ok ? prepared.value : raw;
    const allowed = await withinRoots(scope, name, checked);
    if (!allowed.ok) return { content: [{ type: 'text', text: `EDENIED: ${allowed.message}` }], isError: true };
    // As sent when nothing was aimed, so the tool still reports its repairs to the model.
    const args = allowed.args === checked ? raw : allowed.args;
    const requestId = clientRequestId(request.params._meta);
    if (requestId instanceof Error) return { content: [{ type: 'text', text: `EINVAL: ${requestId.message}` }], isError: true };
    const result = await workspace.calling(() => runningCall.run(extra.requestId, () => set.run(name, args, { signal: extra.signal, requestId })));
    if (result.isError) log('info', `${name}: ${result.text.split('\n')[0]}`);
    const data = result.data as Record<string, unknown>;
    if (!result.isError && tool !== undefined && tool.annotations.readOnlyHint === false) {
      const files = Array.isArray(data.files) ? (data.files as Array<{ path: string }>) : [];
      for (const f of files) workspace.notifyChanged(fileUri(f.path));
    }
    // Structured content is sent when it is the tool's result shape (a refused edit is; an error of the call is not).
    // A success is in the result shape by construction (the schema tests hold every tool to it); only an error is checked.
    const structured = tool !== undefined && (!result.isError || tool.output.safeParse(data).success);
    return { content: [{ type: 'text', text: result.text }], ...(structured ? { structuredContent: data } : {}), isError: result.isError };
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: OVERVIEW_URI,
        name: 'overview',
        title: 'Workspace overview',
        description: 'The workspace map within the overview budget',
        mimeType: 'text/markdown',
      },
    ],
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: FILE_TEMPLATE,
        name: 'file',
        title: 'Workspace file',
        description: "A file, served within the client's per-call budget",
        mimeType: 'text/plain',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    await rootsReady(extra.requestId);
    const set = await session(extra);
    let result: CallResult;
    if (uri === OVERVIEW_URI) {
      const allowed = await withinRoots(scope, 'project_overview', {});
      if (!allowed.ok) throw new McpError(ErrorCode.InvalidRequest, allowed.message);
      result = await set.run('project_overview', {});
    } else if (uri.startsWith(FILE_PREFIX)) {
      const path = filePathOf(uri) as string;
      const allowed = await withinRoots(scope, 'read_file', { path });
      if (!allowed.ok) throw new McpError(ErrorCode.InvalidRequest, allowed.message);
      result = await set.run('read_file', { path });
    } else {
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${uri}: ctxfs serves ${OVERVIEW_URI} and ${FILE_TEMPLATE}.`);
    }
    if (result.isError) throw new McpError(ErrorCode.InvalidParams, result.text);
    return { contents: [{ uri, mimeType: uri === OVERVIEW_URI ? 'text/markdown' : 'text/plain', text: result.text }] };
  });

  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    subscriptions.add(uri);
    workspace.subscribe(uri, notify);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.delete(request.params.uri);
    workspace.unsubscribe(request.params.uri, notify);
    return {};
  });

  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const { ref, argument } = request.params;
    if (ref.type !== 'ref/resource' || ref.uri !== FILE_TEMPLATE || argument.name !== 'path') return { completion: { values: [] } };
    // Completion offers only what the roots let the client read: they are known first.
    await rootsReady(extra.requestId);
    const ctx = workspace.context;
    if (ctx === undefined) return { completion: { values: [], hasMore: true } };
    // Paths that start with what was typed first, then paths that contain it anywhere (a file name).
    const typed = argument.value;
    const lower = typed.toLowerCase();
    const inScope = (path: string): boolean =>
      scope.kind === 'all' || (scope.kind === 'some' && scope.dirs.some((d) => path === d || path.startsWith(`${d}/`)));
    const starts: string[] = [];
    const contains: string[] = [];
    for (const rec of ctx.registry.list()) {
      if (!inScope(rec.path)) continue;
      if (rec.path.startsWith(typed)) starts.push(rec.path);
      else if (lower !== '' && rec.path.toLowerCase().includes(lower)) contains.push(rec.path);
    }
    const total = starts.length + contains.length;
    const found = [...starts, ...contains].slice(0, MAX_COMPLETIONS);
    return { completion: { values: found, total, hasMore: total > found.length } };
  });

  return server;
}
