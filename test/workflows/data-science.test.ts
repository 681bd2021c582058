/**
 * The Data Science agent's loop (workflows/data-science.ts): up to two debug rewrites of code that
 * failed, none for a reflection follow-up or for an error no rewrite can fix; a run that never
 * succeeds is "Data Science failed" for synthesis, not a failed turn.
 */
import {
  AGENT,
  completed,
  questionFor,
  routing,
  useWorkflowEnvironment,
  type ActivityOutput,
  type Fakes,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE } = AGENT;

const runError = (error: string, debuggable = true): ActivityOutput<'runAnalysis'> => ({
  status: 'error',
  kind: 'exception',
  error,
  debuggable,
});
const runOk = (code: string): ActivityOutput<'runAnalysis'> => ({
  status: 'ok',
  result: { mean: 1 },
  code,
  autoFixed: false,
  durationMs: 1,
});

/** A sandbox fake answering each run in turn from `outcomes` (code → run result). */
const sandboxAnswering = (
  ...outcomes: Array<(code: string) => ActivityOutput<'runAnalysis'>>
): Fakes['runAnalysis'] => {
  let runs = 0;
  return async ({ code }) => outcomes[Math.min(runs++, outcomes.length - 1)](code);
};

test('code that never ran (an error no rewrite can fix): no debugging, and synthesis is told Data Science failed', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    runAnalysis: sandboxAnswering(() => runError('no sandbox on this machine', false)),
  });

  expect(run.calls.names).toEqual([
    'startTurn',
    'recallMemory',
    'classifyVagueness',
    'route',
    'rephraseQuestions',
    'planAnalysis',
    'writeAnalysisCode',
    'runAnalysis',
    'finishDataScience',
    'synthesise',
    'rememberTurn',
    'completeTurn',
  ]);
  expect(run.calls.only('finishDataScience')).toMatchObject({
    invocation: 'main',
    status: 'failed',
    output: 'no sandbox on this machine',
  });
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgent: DS,
    mainAgentDraft: '',
    findings: [],
    dataScienceFailed: true,
  });
  // The turn itself completes: the failure is an answer synthesis must honour.
  expect(completed(run)).toMatchObject({
    agents_used: ['data_science'],
    validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
  });
});

test('the debug loop: a failed run is rewritten with its error and run again, until it works', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    runAnalysis: sandboxAnswering(
      () => runError('NameError: sleep'),
      () => runError('KeyError: date'),
      (code) => runOk(code),
    ),
  });

  const names = run.calls.names;
  const loop = names.slice(names.indexOf('writeAnalysisCode'), names.indexOf('summariseAnalysis') + 1);
  expect(loop).toEqual([
    'writeAnalysisCode',
    'runAnalysis',
    'debugAnalysisCode',
    'runAnalysis',
    'debugAnalysisCode',
    'runAnalysis',
    'summariseAnalysis',
  ]);
  const debugs = run.calls.inputsOf('debugAnalysisCode');
  expect(debugs.map((d) => [d.code, d.error])).toEqual([
    ['result = sleep.mean()', 'NameError: sleep'],
    ['# fixed: NameError: sleep', 'KeyError: date'],
  ]);
  expect(debugs[0]).toMatchObject({ question: questionFor(DS), plan: { approach: `Approach to: ${questionFor(DS)}` } });
  // Each run runs the latest rewrite.
  expect(run.calls.inputsOf('runAnalysis').map((r) => r.code)).toEqual([
    'result = sleep.mean()',
    '# fixed: NameError: sleep',
    '# fixed: KeyError: date',
  ]);
  expect(run.calls.only('finishDataScience')).toMatchObject({
    status: 'ok',
    // plan, code, two rewrites, summary, extraction
    costUsd: expect.closeTo(0.06, 10),
  });
  expect(run.calls.only('synthesise').dataScienceFailed).toBe(false);
  completed(run);
});

test('the debug loop gives up after two rewrites: the agent failed, the turn goes on', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    runAnalysis: sandboxAnswering(() => runError('still broken')),
  });

  expect(run.calls.count('runAnalysis')).toBe(3);
  expect(run.calls.count('debugAnalysisCode')).toBe(2);
  expect(run.calls.names).not.toContain('summariseAnalysis');
  expect(run.calls.names).not.toContain('extractFindings');
  expect(run.calls.only('finishDataScience')).toMatchObject({
    status: 'failed',
    output: 'still broken',
    costUsd: expect.closeTo(0.04, 10),
  });
  expect(run.calls.only('synthesise').dataScienceFailed).toBe(true);
  completed(run);
});

test('a reflection follow-up gets one shot: no debug rewrite, however debuggable its error', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    reflect: async () => ({ dataScience: 'A follow-up', domainExpert: null }),
    // The supporting run works; the follow-up's fails with an error a rewrite could have fixed.
    runAnalysis: sandboxAnswering(
      (code) => runOk(code),
      () => runError('IndentationError'),
    ),
  });

  expect(run.calls.count('runAnalysis')).toBe(2);
  expect(run.calls.names).not.toContain('debugAnalysisCode');
  expect(run.calls.inputsOf('finishDataScience').map((f) => [f.invocation, f.status])).toEqual([
    ['supporting', 'ok'],
    ['reflection', 'failed'],
  ]);
  completed(run);
});

test('Data Science failed as a supporting agent: the expert is told so, and synthesis is warned', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    runAnalysis: sandboxAnswering(() => runError('MemoryError')),
  });

  expect(run.calls.count('debugAnalysisCode')).toBe(2);
  expect(run.calls.only('consultDomainExpert')).toMatchObject({
    invocation: 'main',
    supportingInsights: 'Data Science: the analysis did not complete.',
  });
  expect(run.calls.only('reflect').supportingInsights).toBe('Data Science: the analysis did not complete.');
  expect(run.calls.only('synthesise')).toMatchObject({
    mainAgentDraft: `Domain Expert (main) on: ${questionFor(DE)}`,
    dataScienceFailed: true,
  });
  expect(completed(run).agents_used).toEqual(['data_science', 'domain_expert']);
});

test('one run of Data Science worked: not a Data Science failure, even though another run failed', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    reflect: async () => ({ dataScience: 'A follow-up', domainExpert: null }),
    // Supporting: three failed runs; the reflection follow-up works.
    runAnalysis: sandboxAnswering(
      () => runError('one'),
      () => runError('two'),
      () => runError('three'),
      (code) => runOk(code),
    ),
  });

  expect(run.calls.inputsOf('finishDataScience').map((f) => [f.invocation, f.status])).toEqual([
    ['supporting', 'failed'],
    ['reflection', 'ok'],
  ]);
  const synthesis = run.calls.only('synthesise');
  expect(synthesis.dataScienceFailed).toBe(false);
  expect(synthesis.findings.map((f) => f.finding.id)).toEqual(['dsr-001']);
  completed(run);
});
