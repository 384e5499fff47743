import { defineConfig } from 'vitest/config';
import SummaryReporter from './vitest.summary-reporter.ts';

// Workspace packages resolve to their TypeScript sources through the
// `ctxfs-source` export condition, so tests never need a build first.
const conditions = ['ctxfs-source', 'import', 'module', 'node', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', new SummaryReporter()],
  },
});
