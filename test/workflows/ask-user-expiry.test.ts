/**
 * A question's deadline, as a client sets it (the default 900 s, a day at most), on Temporal's time-skipping test
 * server: the turn's timer fires as soon as nothing else is left to happen, so a wait of a day takes no time here.
 * Unanswered, the turn goes on with the default; with `on_expiry: fail`, it fails with input_expired.
 */
import type { Interaction } from '../../contracts/interaction';
import { routing, useWorkflowEnvironment, type ActivityOutput } from './support';

const { runTurn } = useWorkflowEnvironment({ timeSkipping: true });

const vague = { classifyVagueness: async (): Promise<ActivityOutput<'classifyVagueness'>> => ({ vagueness: 'high' }) };
const asking = (interaction: Partial<Interaction>): { interaction: Interaction } => ({
  interaction: { accepts: ['confirmation'], timeout_seconds: 900, on_expiry: 'continue', ...interaction },
});

test('unanswered for the default 900 s: the turn goes on with the default option, at the deadline it set', async () => {
  const run = await runTurn({ ...vague, route: async () => routing('') }, { input: asking({}) });
  const { request } = run.calls.only('requestInput');
  const received = run.calls.only('receiveInput').received;
  expect(received).toMatchObject({ option_id: 'quick', source: 'expiry', at: request.expires_at });
  expect(run.calls.names).toContain('route');
  expect(run.result).not.toBeNull();
});

test('unanswered for a day with on_expiry "fail": the turn fails with input_expired', async () => {
  const run = await runTurn(vague, { input: asking({ timeout_seconds: 86_400, on_expiry: 'fail' }) });
  expect(run.failure?.type).toBe('input_expired');
  expect(run.calls.only('failTurn').error.code).toBe('input_expired');
  const { request } = run.calls.only('requestInput');
  expect(Date.parse(request.expires_at) - Date.parse(run.calls.only('receiveInput').received.at)).toBe(0);
});
