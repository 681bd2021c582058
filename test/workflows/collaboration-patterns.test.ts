/**
 * The six collaboration patterns (docs/design.md#collaboration-patterns), one test each (main agent Data
 * Science / Domain Expert / Health Coach, with or without supporting agents), and the supporting agents running
 * in parallel.
 */
import {
  AGENT,
  ANCHOR,
  MEMORY,
  TURN_INPUT,
  USER_MESSAGE,
  completed,
  gate,
  questionFor,
  routing,
  useWorkflowEnvironment,
  waitFor,
  type ActivityName,
  type ActivityOutput,
} from './support';
import { AGENT_LABELS } from '../../contracts/steps';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

const PREFIX: ActivityName[] = ['startTurn', 'recallMemory', 'classifyVagueness', 'route', 'rephraseQuestions'];
const DATA_SCIENCE: ActivityName[] = [
  'planAnalysis',
  'writeAnalysisCode',
  'runAnalysis',
  'summariseAnalysis',
  'extractFindings',
  'finishDataScience',
];
const VALIDATION_OF_ONE: ActivityName[] = ['runGates', 'critiqueFinding', 'assessFinding'];
const SUFFIX: ActivityName[] = ['synthesise', 'rememberTurn', 'completeTurn'];

const DS_SUMMARY = `Data Science summary of: ${questionFor(DS)}`;
const noFindings = { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 };
const oneValidated = { findings_total: 1, findings_validated: 1, findings_conditional: 0, findings_rejected: 0 };

test('pattern 1, the Domain Expert alone: no Data Science, no validation, no reflection', async () => {
  const run = await runTurn({ route: async () => routing(DE) });

  expect(run.calls.names).toEqual([...PREFIX, 'consultDomainExpert', ...SUFFIX]);
  expect(run.calls.only('rephraseQuestions').routing).toEqual(routing(DE));
  expect(run.calls.only('consultDomainExpert')).toEqual({
    turnId: expect.any(String),
    userId: TURN_INPUT.userId,
    question: questionFor(DE),
    invocation: 'main',
    supportingInsights: '',
    memory: MEMORY,
  });
  const expertAnswer = `Domain Expert (main) on: ${questionFor(DE)}`;
  expect(run.calls.only('synthesise')).toMatchObject({
    userMessage: USER_MESSAGE,
    mainAgent: DE,
    mainAgentDraft: expertAnswer,
    supportingInsights: '',
    expertProse: expertAnswer,
    findings: [],
    anchors: [],
    dataScienceFailed: false,
    memory: MEMORY,
  });
  const result = completed(run);
  expect(result).toMatchObject({
    answer: 'Synthesised answer.',
    agents_used: ['domain_expert'],
    validator: noFindings,
  });
});

test('pattern 2, Data Science alone: plan → code → run → summary → findings, validated, then synthesis', async () => {
  const run = await runTurn({ route: async () => routing(DS) });

  expect(run.calls.names).toEqual([...PREFIX, ...DATA_SCIENCE, ...VALIDATION_OF_ONE, ...SUFFIX]);
  expect(run.calls.only('planAnalysis')).toMatchObject({
    question: questionFor(DS),
    invocation: 'main',
    memory: MEMORY,
  });
  expect(run.calls.only('runAnalysis').code).toBe('result = sleep.mean()');
  expect(run.calls.only('extractFindings')).toMatchObject({ idPrefix: 'ds', summary: DS_SUMMARY });
  expect(run.calls.only('finishDataScience')).toMatchObject({
    invocation: 'main',
    status: 'ok',
    output: DS_SUMMARY,
    // plan + code + summary + extraction, 0.01 each
    costUsd: expect.closeTo(0.04, 10),
  });
  expect(run.calls.only('runGates').findings.map((f) => f.finding.id)).toEqual(['ds-001']);
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: DS,
    mainAgentDraft: DS_SUMMARY,
    supportingInsights: '',
    expertProse: '',
    findings: [{ finding: { id: 'ds-001' }, verdict: 'validated', source: 'data_science' }],
    dataScienceFailed: false,
  });
  expect(completed(run)).toMatchObject({ agents_used: ['data_science'], validator: oneValidated });
});

test('pattern 3, the Domain Expert interpreting Data Science: the expert sees its summary, then reflection, then validation', async () => {
  const run = await runTurn({ route: async () => routing(DE, [DS]) });

  expect(run.calls.names).toEqual([
    ...PREFIX,
    ...DATA_SCIENCE,
    'consultDomainExpert',
    'reflect',
    ...VALIDATION_OF_ONE,
    ...SUFFIX,
  ]);
  expect(run.calls.only('planAnalysis').invocation).toBe('supporting');
  expect(run.calls.only('consultDomainExpert')).toMatchObject({
    invocation: 'main',
    question: questionFor(DE),
    supportingInsights: `Data Science: ${DS_SUMMARY}`,
  });
  const expertAnswer = `Domain Expert (main) on: ${questionFor(DE)}`;
  expect(run.calls.only('reflect')).toMatchObject({
    userMessage: USER_MESSAGE,
    mainDraft: expertAnswer,
    supportingInsights: `Data Science: ${DS_SUMMARY}`,
  });
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: DE,
    mainAgentDraft: expertAnswer,
    supportingInsights: `Data Science: ${DS_SUMMARY}`,
    expertProse: expertAnswer,
    findings: [{ finding: { id: 'ds-001' }, verdict: 'validated' }],
  });
  expect(completed(run)).toMatchObject({ agents_used: ['data_science', 'domain_expert'], validator: oneValidated });
});

test('pattern 4, the Health Coach alone: an empty pre-validation, the coach, synthesis with its anchors', async () => {
  const run = await runTurn({ route: async () => routing(HC) });

  // Nothing to pre-validate and nothing after: no gates at all, and no reflection.
  expect(run.calls.names).toEqual([...PREFIX, 'coachUser', ...SUFFIX]);
  expect(run.calls.only('coachUser')).toEqual({
    turnId: expect.any(String),
    userId: TURN_INPUT.userId,
    messages: TURN_INPUT.messages,
    question: questionFor(HC),
    findings: [],
    supportingInsights: '',
    memory: MEMORY,
  });
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: HC,
    mainAgentDraft: `Coach reply to: ${questionFor(HC)}`,
    anchors: [ANCHOR],
    findings: [],
    dataScienceFailed: false,
  });
  expect(completed(run)).toMatchObject({ agents_used: ['health_coach'], validator: noFindings });
});

test('pattern 5, the coach on Data Science: findings validated before the coach, who never sees the DS summary', async () => {
  const run = await runTurn({ route: async () => routing(HC, [DS]) });

  expect(run.calls.names).toEqual([
    ...PREFIX,
    ...DATA_SCIENCE,
    ...VALIDATION_OF_ONE,
    'coachUser',
    'reflect',
    // Nothing is left to validate after the coach: the findings were, before it.
    ...SUFFIX,
  ]);
  const coach = run.calls.only('coachUser');
  expect(coach.findings).toEqual([
    {
      finding: expect.objectContaining({ id: 'ds-001' }),
      verdict: 'validated',
      assessment: { mechanism: 'Mechanism of ds-001', strategy: 'Strategy for ds-001' },
    },
  ]);
  expect(coach.supportingInsights).toBe('');
  expect(run.calls.only('reflect').supportingInsights).toBe(`Data Science: ${DS_SUMMARY}`);
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: HC,
    supportingInsights: `Data Science: ${DS_SUMMARY}`,
    findings: [{ finding: { id: 'ds-001' }, verdict: 'validated' }],
    anchors: [ANCHOR],
  });
  expect(completed(run)).toMatchObject({ agents_used: ['data_science', 'health_coach'], validator: oneValidated });
  // The anchors synthesis could cite end the turn as personal_anchors, apart from the fact sheet.
  expect(run.calls.only('completeTurn').personalAnchors).toEqual([
    { claim: `anchor.${ANCHOR.key}`, label: ANCHOR.label, value: 401, unit: 'min', n: 14, window: '14 days' },
  ]);
});

test('pattern 6, the coach on Data Science and the Domain Expert: the coach gets the expert prose and validated findings', async () => {
  const run = await runTurn({ route: async () => routing(HC, [DS, DE]) });

  const supporting = run.calls.names.slice(PREFIX.length, PREFIX.length + DATA_SCIENCE.length + 1);
  expect([...supporting].sort()).toEqual([...DATA_SCIENCE, 'consultDomainExpert'].sort());
  expect(run.calls.names).toEqual([...PREFIX, ...supporting, ...VALIDATION_OF_ONE, 'coachUser', 'reflect', ...SUFFIX]);
  expect(run.calls.names.filter((name) => DATA_SCIENCE.includes(name))).toEqual(DATA_SCIENCE);

  const expertAnswer = `Domain Expert (supporting) on: ${questionFor(DE)}`;
  expect(run.calls.only('consultDomainExpert')).toMatchObject({ invocation: 'supporting', supportingInsights: '' });
  expect(run.calls.only('coachUser')).toMatchObject({
    findings: [{ finding: { id: 'ds-001' }, verdict: 'validated' }],
    supportingInsights: `Domain Expert: ${expertAnswer}`,
  });
  const insights = `Data Science: ${DS_SUMMARY}\n\nDomain Expert: ${expertAnswer}`;
  expect(run.calls.only('reflect').supportingInsights).toBe(insights);
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: HC,
    supportingInsights: insights,
    expertProse: expertAnswer,
    findings: [{ finding: { id: 'ds-001' }, verdict: 'validated' }],
  });
  expect(completed(run)).toMatchObject({
    agents_used: ['data_science', 'domain_expert', 'health_coach'],
    validator: oneValidated,
  });
});

test('supporting agents run in parallel: each starts before the other finishes', async () => {
  const dataScienceStarted = gate();
  const expertStarted = gate();
  const run = await runTurn({
    route: async () => routing(HC, [DS, DE]),
    // Each waits for the other to have started: run one after the other, they would time out.
    planAnalysis: async ({ question }) => {
      dataScienceStarted.open();
      await waitFor(expertStarted, 'the Domain Expert did not start while Data Science was planning');
      return {
        plan: { approach: question, spec: { kind: 'scalar', feature: 'steps', target: null, windowDays: 30 } },
        startedAt: '2026-01-01T00:00:00.000Z',
        costUsd: 0,
      };
    },
    consultDomainExpert: async () => {
      expertStarted.open();
      await waitFor(dataScienceStarted, 'Data Science did not start while the Domain Expert was consulted');
      return { answer: 'Expert answer.', costUsd: 0, toolCalls: 0, urls: [] };
    },
  });

  expect(completed(run).agents_used).toEqual(['data_science', 'domain_expert', 'health_coach']);
  const { timeline } = run.calls;
  expect(timeline.indexOf('start planAnalysis')).toBeLessThan(timeline.indexOf('end consultDomainExpert'));
  expect(timeline.indexOf('start consultDomainExpert')).toBeLessThan(timeline.indexOf('end planAnalysis'));
  // The main agent waits for both.
  expect(timeline.indexOf('start coachUser')).toBeGreaterThan(timeline.indexOf('end consultDomainExpert'));
  expect(timeline.indexOf('start coachUser')).toBeGreaterThan(timeline.indexOf('end finishDataScience'));
});

test('Data Science as main with the Domain Expert supporting: the expert runs first, Data Science is not given its prose', async () => {
  const run = await runTurn({ route: async () => routing(DS, [DE]) });

  expect(run.calls.names).toEqual([
    ...PREFIX,
    'consultDomainExpert',
    ...DATA_SCIENCE,
    'reflect',
    ...VALIDATION_OF_ONE,
    ...SUFFIX,
  ]);
  expect(run.calls.only('consultDomainExpert').invocation).toBe('supporting');
  expect(run.calls.only('planAnalysis').invocation).toBe('main');
  const expertAnswer = `Domain Expert (supporting) on: ${questionFor(DE)}`;
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: DS,
    mainAgentDraft: DS_SUMMARY,
    supportingInsights: `Domain Expert: ${expertAnswer}`,
    expertProse: expertAnswer,
  });
  expect(completed(run).agents_used).toEqual(['data_science', 'domain_expert']);
});

test('a rephrase that leaves an agent out: that agent is asked the user message itself', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    rephraseQuestions: async () => ({ [DE]: 'Only the expert got a question' }),
  });

  expect(run.calls.only('planAnalysis').question).toBe(USER_MESSAGE);
  expect(run.calls.only('consultDomainExpert').question).toBe('Only the expert got a question');
  completed(run);
});

test('routing and rephrase results naming agents by their labels (histories recorded before agent ids) run the same turn', async () => {
  const run = await runTurn({
    route: async () =>
      ({
        main_agent: AGENT_LABELS.domain_expert,
        supporting_agents: [AGENT_LABELS.data_science],
        collaboration_workflow: '',
      }) as unknown as ActivityOutput<'route'>,
    rephraseQuestions: async () =>
      ({
        [AGENT_LABELS.domain_expert]: questionFor(DE),
        [AGENT_LABELS.data_science]: questionFor(DS),
      }) as unknown as ActivityOutput<'rephraseQuestions'>,
  });

  expect(run.calls.only('planAnalysis')).toMatchObject({ invocation: 'supporting', question: questionFor(DS) });
  expect(run.calls.only('consultDomainExpert')).toMatchObject({ invocation: 'main', question: questionFor(DE) });
  expect(run.calls.only('synthesise').mainAgent).toBe(DE);
  expect(completed(run).agents_used).toEqual(['data_science', 'domain_expert']);
});
