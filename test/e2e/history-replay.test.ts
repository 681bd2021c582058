/**
 * Determinism guard: every recorded turn history in test/histories/ must replay against the current
 * workflow code. A change that would break in-flight turns on deploy fails here, before it ships.
 * Re-record with `npm run histories:record` (against `npm start`) when a change is deliberate.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { workflowTracingSinks } from '../../platform/temporal/tracing';
import { readTestEnv } from '../support/test-env';

const dir = path.join(__dirname, '..', 'histories');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));

test('the workflow bundle leaves zod out: every workflow sandbox would set it up again, ~30 ms of CPU a turn', () => {
  const bundle = fs.readFileSync(readTestEnv().workflowBundlePath, 'utf8');
  expect(bundle).toContain('TurnWorkflow');
  expect(bundle).not.toContain('ZodError');
});

test('the workflow bundle has the tracing interceptors (docs/operations.md#traces): the replays below prove them replay-safe', () => {
  const bundle = fs.readFileSync(readTestEnv().workflowBundlePath, 'utf8');
  expect(bundle).toContain('OpenTelemetryInboundInterceptor');
  expect(bundle).toContain('OpenTelemetryOutboundInterceptor');
});

test('there are recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(2);
});

test.each(files)('%s replays against the current workflow code', async (file) => {
  const history = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: readTestEnv().workflowBundlePath }, sinks: workflowTracingSinks() },
    history,
  );
});
