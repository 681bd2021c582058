/**
 * The quick bookkeeping steps on every turn's path (start, recall memory, finish Data Science, complete)
 * run as local activities (workflows/activity-proxies.ts): the history records a MarkerRecorded event, with the
 * step's summary, where it recorded ActivityTaskScheduled/Started/Completed and a task queue round trip.
 * They still run once each on the usual path, are still retried until Postgres is back, and the histories
 * they leave replay.
 */
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { localActivityType } from '../../platform/temporal/local-activity-markers';
import {
  AGENT,
  completed,
  routing,
  useWorkflowEnvironment,
  type ActivityName,
  type Fakes,
  type TurnRun,
} from './support';

const { runTurn, replay } = useWorkflowEnvironment();
const { DS, DE } = AGENT;
const LOCAL: ActivityName[] = ['startTurn', 'recallMemory', 'finishDataScience', 'completeTurn'];

/** The activity types the history scheduled as full activities, and those it ran locally, in order. */
async function historyShape(run: TurnRun) {
  const history = await run.handle.fetchHistory();
  const scheduled: string[] = [];
  const local: Array<{ type: string; summary: string | undefined }> = [];
  for (const event of history.events ?? []) {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) scheduled.push(type);
    const localType = localActivityType(event);
    const summary = event.userMetadata?.summary;
    if (localType) {
      local.push({
        type: localType,
        summary: summary ? defaultPayloadConverter.fromPayload<string>(summary) : undefined,
      });
    }
  }
  return { history, scheduled, local };
}

test.each([
  [
    'a knowledge turn',
    { route: async () => routing(DE) },
    ['classifyVagueness', 'route', 'rephraseQuestions', 'consultDomainExpert', 'synthesise', 'rememberTurn'],
    [
      { type: 'startTurn', summary: 'Start the turn' },
      { type: 'recallMemory', summary: 'Recall memory' },
      { type: 'completeTurn', summary: 'Complete the turn' },
    ],
  ],
  [
    'a data turn',
    { route: async () => routing(DS) },
    [
      'classifyVagueness',
      'route',
      'rephraseQuestions',
      'planAnalysis',
      'writeAnalysisCode',
      'runAnalysis',
      'summariseAnalysis',
      'extractFindings',
      'runGates',
      'critiqueFinding',
      'assessFinding',
      'synthesise',
      'rememberTurn',
    ],
    [
      { type: 'startTurn', summary: 'Start the turn' },
      { type: 'recallMemory', summary: 'Recall memory' },
      { type: 'finishDataScience', summary: '4 · Data Science · done (main)' },
      { type: 'completeTurn', summary: 'Complete the turn' },
    ],
  ],
] satisfies Array<[string, Partial<Fakes>, string[], Array<{ type: string; summary: string }>]>)(
  '%s: the bookkeeping steps are local activities with their summaries, the rest full activities; its history replays',
  async (_, fakes, activities, locals) => {
    const run = await runTurn(fakes);
    completed(run);
    for (const name of LOCAL) expect(run.calls.count(name)).toBe(locals.some((l) => l.type === name) ? 1 : 0);
    const { history, scheduled, local } = await historyShape(run);
    expect(scheduled).toEqual(activities);
    expect(local).toEqual(locals);
    await replay(history, run.handle.workflowId);
  },
);

test('a local bookkeeping step is retried until Postgres is back, and the turn completes', async () => {
  let attempts = 0;
  const run = await runTurn({
    route: async () => routing(DE),
    startTurn: async () => {
      if (++attempts < 3) throw ApplicationFailure.retryable('Connection terminated unexpectedly', 'Error');
    },
  });
  completed(run);
  expect(run.calls.count('startTurn')).toBe(3);
  const { local } = await historyShape(run);
  expect(local.map((l) => l.type)).toEqual(['startTurn', 'recallMemory', 'completeTurn']);
});
