/**
 * `npm run worker` as the suites spawn it, except that the LLM layer's SDK client gives up on a request
 * after AMY_TEST_LLM_TIMEOUT_MS (production: two minutes, not configurable), so a suite can reach a
 * model-call timeout in seconds. Everything else is the production wiring. It is a real process because
 * only there does the SDK classify a timeout as it does in production: under jest, undici's AbortError
 * comes from another realm and reads as a connection error (see test/steps/llm.test.ts).
 */
import { loadConfig } from '../../platform/config';
import { createAnthropicClient, createLlm, isScriptedModel } from '../../platform/llm';
import { createStepDeps } from '../../worker/dependencies';
import { runTurnWorker } from '../../worker/run-worker';

async function run() {
  const config = loadConfig();
  const timeout = Number(process.env.AMY_TEST_LLM_TIMEOUT_MS);
  if (!(timeout > 0)) throw new Error('AMY_TEST_LLM_TIMEOUT_MS must be a positive number of milliseconds');
  const deps = createStepDeps(config);
  const llm = createLlm({
    anthropic: createAnthropicClient(config).withOptions({ timeout }),
    pool: deps.pool,
    events: deps.events,
    costWarnUsd: config.AMY_COST_WARN_USD,
    sendStepInputs: isScriptedModel(config),
  });
  await runTurnWorker(config, { ...deps, llm });
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
