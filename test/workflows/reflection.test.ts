/**
 * Reflection (docs/design.md#step-5-reflection): only when there were supporting agents; a follow-up for Data Science
 * and/or the Domain Expert, whose output joins synthesis and whose findings join validation.
 */
import {
  AGENT,
  USER_MESSAGE,
  completed,
  gate,
  questionFor,
  routing,
  useWorkflowEnvironment,
  waitFor,
  type Fakes,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

const DS_SUMMARY = `Data Science summary of: ${questionFor(DS)}`;
const reflectionAsking = (follow: { dataScience?: string; domainExpert?: string }): Fakes['reflect'] => {
  return async () => ({ dataScience: follow.dataScience ?? null, domainExpert: follow.domainExpert ?? null });
};

test('no supporting agents: no reflection step at all', async () => {
  for (const main of [DS, DE, HC]) {
    const run = await runTurn({ route: async () => routing(main) });
    expect(run.calls.names).not.toContain('reflect');
    completed(run);
  }
});

test('supporting agents, reflection says no: nothing runs between reflection and validation', async () => {
  const run = await runTurn({ route: async () => routing(DE, [DS]) });

  const reflect = run.calls.names.indexOf('reflect');
  expect(run.calls.names.slice(reflect)).toEqual([
    'reflect',
    'runGates',
    'critiqueFinding',
    'assessFinding',
    'synthesise',
    'rememberTurn',
    'completeTurn',
  ]);
  expect(run.calls.only('reflect')).toMatchObject({
    userMessage: USER_MESSAGE,
    mainDraft: `Domain Expert (main) on: ${questionFor(DE)}`,
    supportingInsights: `Data Science: ${DS_SUMMARY}`,
  });
  expect(run.calls.only('synthesise').supportingInsights).toBe(`Data Science: ${DS_SUMMARY}`);
  expect(run.calls.count('planAnalysis')).toBe(1);
  expect(run.calls.count('consultDomainExpert')).toBe(1);
});

test('a Data Science follow-up: one more run (reflection, dsr- ids), its findings validated with the others', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    reflect: reflectionAsking({ dataScience: 'What about weekends only?' }),
  });

  expect(run.calls.inputsOf('planAnalysis').map((p) => [p.invocation, p.question])).toEqual([
    ['supporting', questionFor(DS)],
    ['reflection', 'What about weekends only?'],
  ]);
  expect(run.calls.inputsOf('extractFindings').map((e) => e.idPrefix)).toEqual(['ds', 'dsr']);
  expect(run.calls.inputsOf('finishDataScience').map((f) => [f.invocation, f.status])).toEqual([
    ['supporting', 'ok'],
    ['reflection', 'ok'],
  ]);
  // The follow-up runs after reflection, and everything is validated in one pass after it.
  const names = run.calls.names;
  expect(names.lastIndexOf('planAnalysis')).toBeGreaterThan(names.indexOf('reflect'));
  expect(run.calls.only('runGates').findings.map((f) => f.finding.id)).toEqual(['ds-001', 'dsr-001']);
  expect(names.indexOf('runGates')).toBeGreaterThan(names.lastIndexOf('finishDataScience'));

  const synthesis = run.calls.only('synthesise');
  expect(synthesis.supportingInsights).toBe(
    `Data Science: ${DS_SUMMARY}\n\nData Science follow-up: Data Science summary of: What about weekends only?`,
  );
  expect(synthesis.findings.map((f) => f.finding.id)).toEqual(['ds-001', 'dsr-001']);
  // The expert was not asked again.
  expect(run.calls.count('consultDomainExpert')).toBe(1);
  expect(completed(run).validator.findings_total).toBe(2);
});

test('a Domain Expert follow-up: the expert again (reflection, no supporting insights), its prose joins synthesis', async () => {
  const run = await runTurn({
    route: async () => routing(DS, [DE]),
    reflect: reflectionAsking({ domainExpert: 'Is 7 h enough at 45?' }),
  });

  const expert = run.calls.inputsOf('consultDomainExpert');
  expect(expert.map((e) => [e.invocation, e.question, e.supportingInsights])).toEqual([
    ['supporting', questionFor(DE), ''],
    ['reflection', 'Is 7 h enough at 45?', ''],
  ]);
  expect(run.calls.count('planAnalysis')).toBe(1);
  const synthesis = run.calls.only('synthesise');
  const supportingAnswer = `Domain Expert (supporting) on: ${questionFor(DE)}`;
  const followUpAnswer = 'Domain Expert (reflection) on: Is 7 h enough at 45?';
  expect(synthesis.supportingInsights).toBe(
    `Domain Expert: ${supportingAnswer}\n\nDomain Expert follow-up: ${followUpAnswer}`,
  );
  expect(synthesis.expertProse).toBe(`${supportingAnswer}\n\n${followUpAnswer}`);
  expect(completed(run).agents_used).toEqual(['data_science', 'domain_expert']);
});

test('both follow-ups run in parallel, Data Science follow-up first in the insights', async () => {
  const followUpPlanned = gate();
  const followUpConsulted = gate();
  const base = {
    plan: { approach: '', spec: { kind: 'scalar' as const, feature: 'steps', target: null, windowDays: 7 } },
  };
  const run = await runTurn({
    route: async () => routing(HC, [DS, DE]),
    reflect: reflectionAsking({ dataScience: 'DS follow-up?', domainExpert: 'DE follow-up?' }),
    planAnalysis: async ({ invocation }) => {
      if (invocation === 'reflection') {
        followUpPlanned.open();
        await waitFor(
          followUpConsulted,
          'the Domain Expert follow-up did not start while Data Science planned its own',
        );
      }
      return { ...base, startedAt: '2026-01-01T00:00:00.000Z', costUsd: 0 };
    },
    consultDomainExpert: async ({ invocation, question }) => {
      if (invocation === 'reflection') {
        followUpConsulted.open();
        await waitFor(
          followUpPlanned,
          'the Data Science follow-up did not start while the Domain Expert was consulted',
        );
      }
      return { answer: `Expert on ${question}`, costUsd: 0, toolCalls: 0, urls: [] };
    },
    summariseAnalysis: async ({ question }) => ({ summary: `Summary of ${question}`, costUsd: 0 }),
  });

  const result = completed(run);
  expect(result.agents_used).toEqual(['data_science', 'domain_expert', 'health_coach']);
  expect(run.calls.only('synthesise').supportingInsights).toBe(
    [
      `Data Science: Summary of ${questionFor(DS)}`,
      `Domain Expert: Expert on ${questionFor(DE)}`,
      'Data Science follow-up: Summary of DS follow-up?',
      'Domain Expert follow-up: Expert on DE follow-up?',
    ].join('\n\n'),
  );
  // The coach's pre-validation took ds-001; the follow-up's finding is validated after reflection.
  expect(run.calls.inputsOf('runGates').map((g) => g.findings.map((f) => f.finding.id))).toEqual([
    ['ds-001'],
    ['dsr-001'],
  ]);
});

test('a follow-up whose analysis fails adds no insight and no finding, and is not a Data Science failure', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    reflect: reflectionAsking({ dataScience: 'Too ambitious follow-up' }),
    runAnalysis: async ({ code }) =>
      code === 'reflection code'
        ? { status: 'error', kind: 'exception', error: 'KeyError: weekend', debuggable: true }
        : { status: 'ok', result: { mean: 1 }, code, autoFixed: false, durationMs: 1 },
    writeAnalysisCode: async ({ question }) => ({
      code: question === 'Too ambitious follow-up' ? 'reflection code' : 'supporting code',
      costUsd: 0,
    }),
  });

  expect(run.calls.inputsOf('finishDataScience').map((f) => [f.invocation, f.status])).toEqual([
    ['supporting', 'ok'],
    ['reflection', 'failed'],
  ]);
  const synthesis = run.calls.only('synthesise');
  expect(synthesis.supportingInsights).toBe(`Data Science: ${DS_SUMMARY}`);
  expect(synthesis.findings.map((f) => f.finding.id)).toEqual(['ds-001']);
  expect(synthesis.dataScienceFailed).toBe(false);
  completed(run);
});
