import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import SummaryReporter from './vitest.summary-reporter.ts';

// Workspace packages resolve to their TypeScript sources through the
// `ctxfs-source` export condition, so tests never need a build first.
// The run the workers belong to (they inherit it): test schemas on a shared PostgreSQL server carry it, so that
// one run's clean-up never drops another's (packages/context/test/support/postgres-schemas.ts).
process.env.CTXFS_TEST_RUN ??= String(process.pid);

const conditions = ['ctxfs-source', 'import', 'module', 'node', 'default'];
// Server-side, the module runner resolves a CommonJS `require` with these
// conditions too: `import` there hands a CommonJS package (pg) the ES module
// namespace of a dual package it requires (pg-pool) instead of its class.
// Without it, an `import` still resolves through `import`, a `require` through `require`.
const ssrConditions = conditions.filter((c) => c !== 'import' && c !== 'module');

/**
 * The container backend's suites that prove an engine, and the CLI's tests of
 * a stopped or paused container (what each engine reports of one differs, and the
 * way out names the engine's own command): they run once per
 * engine, Docker in the `default` project and Podman in `podman` (the
 * fixture picks the engine from CTXFS_TEST_ENGINE and fails in CI when it is
 * missing, so neither run can skip silently).
 */
const engineSuites = [
  'packages/container/test/absolute-path-hint.test.ts',
  'packages/container/test/conformance.test.ts',
  'packages/container/test/container.test.ts',
  'packages/container/test/faults.test.ts',
  'packages/container/test/links.test.ts',
  'packages/container/test/permissions.test.ts',
  'packages/container/test/snapshot-dir.test.ts',
  'packages/container/test/walk.test.ts',
  'packages/cli/test/snapshot-stopped.test.ts',
  'packages/cli/test/stopped-workspace.test.ts',
];

/**
 * The context layer's suites run again over the PostgreSQL state store: each
 * context they make gets a schema of its own on the test server
 * (test/support/test-state.ts). In CI the server's URL is always set, so a
 * missing server fails them.
 */
const contextSuites = [
  'buffer-routing',
  'buffers-person',
  'buffers',
  'call-style',
  'edit-concurrency',
  'edit-record-failure',
  'edits',
  'encodings',
  'guarded-session',
  'large-files',
  'patch-edits',
  'path-spellings',
  'refusal-size',
  'rename-links',
  'read-retention',
  'request-id',
  'retrieval',
  'safety-guard',
  'search',
  'symbols-nested',
  'undo-ownership',
].map((name) => `packages/context/test/${name}.test.ts`);

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions: ssrConditions, externalConditions: ssrConditions } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The token counter's vocabulary cache: one for the run, never the user's (~/.cache/ctxfs).
    env: { CTXFS_CACHE_DIR: join(tmpdir(), 'ctxfs-test-cache') },
    reporters: ['default', new SummaryReporter()],
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'podman', include: engineSuites, env: { CTXFS_TEST_ENGINE: 'podman' } },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: contextSuites,
          env: { CTXFS_TEST_STATE: 'postgres' },
          globalSetup: ['packages/context/test/support/postgres-schemas.ts'],
        },
      },
    ],
  },
});
