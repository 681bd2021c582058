/**
 * Temporal server settings (dynamic config) a turn's latency depends on. The dev server that `npm start`,
 * the tests, `npm run bench` and `npm run load` run is started with them, and deploy/temporal/dynamicconfig.yaml
 * carries the same values for a real cluster (test/toolchain/deploy-files.test.ts checks that they agree).
 */
export const TEMPORAL_SERVER_SETTINGS: Readonly<Record<string, unknown>> = {
  /**
   * How often a history shard may read its transfer queue, where every workflow task (a run's first, and
   * the one after each activity's result, timer or signal) waits to be handed to matching. At the server's
   * default, 20 reads a second, each such task waits for the next read, up to 50 ms: in a turn, whose steps
   * run one after the other, that was the largest part of the time between steps (a workflow task waited
   * 42 ms at p50 from scheduled to started on the dev server, which has one shard; 1.1 ms at 200). A read
   * takes every task written since the last, so a busy shard reads at most this often, in batches.
   */
  'history.transferProcessorMaxPollRPS': 200,
};
