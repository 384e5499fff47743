/**
 * `@ctxfs/mcp` — the ctxfs MCP server: every tool of `@ctxfs/tools` with its
 * schemas and structured results, the overview and files as resources, client
 * roots, approvals through elicitation, over stdio or Streamable HTTP, on any
 * backend.
 *
 * @example
 * ```ts
 * import { McpWorkspace, serveHttp } from '@ctxfs/mcp';
 * const workspace = McpWorkspace.open({ backend: { kind: 'host', root: '/repo' }, clientProfiles: { 'ollama*': 'small' } });
 * const http = await serveHttp(workspace, { port: 8765 });
 * ```
 *
 * @module
 */

export { type BackendSpec, describeBackend, openBackend, parseBackend } from './backend.ts';
export { loadMcpConfig, type McpConfig, parseMcpConfig } from './config-file.ts';
export { type ConnectionOptions, createConnection, FILE_TEMPLATE, fileUri, OVERVIEW_URI, REQUEST_ID_META, SERVER_INFO } from './connection.ts';
export { ELICIT_MESSAGE_CHARS, elicitationApprover, RoutingApprover } from './elicitation.ts';
export { type HttpHandle, type HttpOptions, serveHttp } from './http.ts';
export { profileFor } from './profiles.ts';
export { type RootScope, rootScope, withinRoots } from './roots.ts';
export { parseClientProfiles, type RunningServer, type RunServerOptions, runServer } from './run-server.ts';
export { serveStdio } from './stdio.ts';
export { type McpServerOptions, McpWorkspace } from './workspace.ts';
