/**
 * A recorded data-question turn for the CLI's view tests, and a real `TurnStream` that replays it:
 * the SDK runs unmodified over a `fetch` that answers with the recording as SSE, so `stream.text()`
 * concatenates each agent's deltas exactly as it does against the service.
 *
 * The turn: Data Science plans (its first attempt of `ds_plan` fails midway and is retried, going on
 * from the text the failed attempt had shown, as the service's narration does), computes
 * and summarises; two findings are validated, one accepted through all seven gates and one rejected at
 * the hard `sample_size` gate; synthesis streams the answer; the fact-check flags one number; memory
 * writes; the turn completes.
 */
import { Amy, type TurnStream } from '@amy/sdk';

export const TURN_ID = 'turn_01JCLIVIEW0000000000000000';

export const ANSWER =
  'Your average resting heart rate over the last 90 days was 58.2 bpm, measured on 88 days. ' +
  'That sits in the usual adult range; about 42 of those days were below 58 bpm.';

const PLAN = 'Plan: take the mean of resting heart rate over the last 90 days of your daily summaries.\n';
/** What the failed first attempt of `ds_plan` had shown; the retry streams the rest. */
const PLAN_BEFORE_RETRY = PLAN.slice(0, 40);
const SUMMARY = 'Computed over 88 days with a value.\nThe mean is 58.2 bpm (SD 3.1).';

const GATES = [
  'sample_size',
  'effect_vs_noise',
  'construct_validity',
  'bootstrap',
  'subgroup_consistency',
  'method_triangulation',
  'discriminative_power',
] as const;

const chunks = (text: string, size = 12) => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
const thoughts = (agent: string, step: string, attempt: number, text: string) =>
  chunks(text).map((delta) => ['agent.thought', { agent, delta, attempt, step }] as const);

const RECORDING: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['turn.started', { turn_id: TURN_ID, at: '2026-11-23T10:00:00.000Z' }],
  [
    'agent.started',
    {
      agent: 'data_science',
      at: '2026-11-23T10:00:01.000Z',
      question: 'Compute the average resting heart rate over the last 90 days',
    },
  ],
  ...thoughts('data_science', 'ds_plan', 1, PLAN_BEFORE_RETRY),
  ['step.retry', { step: 'ds_plan', attempt: 2, reason: 'previous attempt failed', at: '2026-11-23T10:00:04.000Z' }],
  ...thoughts('data_science', 'ds_plan', 2, PLAN.slice(PLAN_BEFORE_RETRY.length)),
  ...thoughts('data_science', 'ds_summary', 1, SUMMARY),
  [
    'agent.completed',
    {
      agent: 'data_science',
      at: '2026-11-23T10:00:09.500Z',
      duration_ms: 8500,
      cost_usd: 0.0412,
      output_summary: 'Average resting heart rate 58.2 bpm over 88 days.',
    },
  ],
  ...GATES.map(
    (gate) =>
      [
        'validator.gate',
        {
          finding_id: 'ds-001',
          claim: 'average resting heart rate over the last 90 days',
          gate,
          verdict: gate === 'subgroup_consistency' ? 'skipped' : 'passed',
          detail: {},
        },
      ] as const,
  ),
  [
    'validator.gate',
    {
      finding_id: 'ds-002',
      claim: 'resting heart rate falls on rest days',
      gate: 'sample_size',
      verdict: 'failed',
      detail: { n: 4, min_required: 10 },
    },
  ],
  ['validator.critic', { finding_id: 'ds-001', verdict: 'accept', reasoning: 'A descriptive summary.', concerns: [] }],
  [
    'validator.critic',
    { finding_id: 'ds-002', verdict: 'reject', reasoning: 'Four days cannot carry it.', concerns: [] },
  ],
  ['agent.started', { agent: 'synthesis', at: '2026-11-23T10:00:12.000Z', question: 'How is my resting heart rate?' }],
  ...thoughts('synthesis', 'synthesis', 1, ANSWER),
  [
    'agent.completed',
    {
      agent: 'synthesis',
      at: '2026-11-23T10:00:15.000Z',
      duration_ms: 3000,
      cost_usd: 0.0121,
      output_summary: ANSWER.slice(0, 160),
    },
  ],
  ['fact_check', { issues: [{ value: 42, severity: 'warn' }] }],
  ['agent.started', { agent: 'memory', at: '2026-11-23T10:00:15.100Z', question: 'What should Amy remember?' }],
  [
    'agent.completed',
    {
      agent: 'memory',
      at: '2026-11-23T10:00:16.000Z',
      duration_ms: 900,
      cost_usd: 0.0009,
      output_summary: '+1 entries (1 insight)',
    },
  ],
  [
    'turn.completed',
    {
      turn_id: TURN_ID,
      result: {
        answer: ANSWER,
        fact_sheet: [
          { claim: 'ds-001.mean', value: 58.2, unit: 'bpm', source: 'data_science', n: 88, window: 'last 90 days' },
        ],
        agents_used: ['data_science'],
        validator: { findings_total: 2, findings_validated: 1, findings_conditional: 0, findings_rejected: 1 },
        cost_usd: 0.0542,
        duration_ms: 16000,
      },
    },
  ],
];

const RECORDED_EVENTS = RECORDING.map(([type, data], i) => ({ id: i + 1, type, data }));

/** The text Data Science's plan had when its first attempt failed, which the retry goes on from. */
export { PLAN_BEFORE_RETRY };
export const DATA_SCIENCE_TEXT = PLAN + SUMMARY;

/** A `TurnStream` of the recording, as `amy.turns.stream()` gives it, read from a fake API. */
export function recordedStream(): TurnStream {
  const sse = RECORDED_EVENTS.map((e) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');
  const amy = new Amy({
    apiKey: 'amy_test_key',
    baseUrl: 'http://amy.test',
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  return amy.turns.stream(TURN_ID);
}
