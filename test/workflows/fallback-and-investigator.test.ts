/**
 * The two turns that never reach the specialists: the conversational fallback (routing names no agent)
 * and the Investigator (vagueness high, routing skipped).
 */
import {
  MEMORY,
  TURN_INPUT,
  USER_MESSAGE,
  completed,
  criticSaying,
  gatesSaying,
  hypothesis,
  routing,
  useWorkflowEnvironment,
} from './support';

const { runTurn } = useWorkflowEnvironment();

test('routing that names no agent: the conversational reply is the answer, remembered, and nothing else runs', async () => {
  const run = await runTurn({ route: async () => routing('') });

  expect(run.calls.names).toEqual([
    'startTurn',
    'recallMemory',
    'classifyVagueness',
    'route',
    'replyConversationally',
    'rememberTurn',
    'completeTurn',
  ]);
  expect(run.calls.only('route').messages).toEqual(TURN_INPUT.messages);
  expect(run.calls.only('replyConversationally').messages).toEqual(TURN_INPUT.messages);
  // Memory, read once at the start, reaches every model step of the turn, the extractor included.
  for (const name of ['classifyVagueness', 'route', 'replyConversationally'] as const) {
    expect({ name, memory: run.calls.only(name).memory }).toEqual({ name, memory: MEMORY });
  }
  expect(run.calls.only('rememberTurn')).toMatchObject({
    userMessage: USER_MESSAGE,
    answer: 'Happy to chat! Ask me about your data any time.',
    validated: [],
    memory: MEMORY,
  });
  expect(completed(run)).toEqual({
    answer: 'Happy to chat! Ask me about your data any time.',
    fact_sheet: [],
    personal_anchors: [],
    agents_used: [],
    validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
    cost_usd: 0,
    duration_ms: 0,
  });
});

test('vagueness high: the Investigator tests its hypotheses, validates them, and its briefing is the answer', async () => {
  const run = await runTurn({
    classifyVagueness: async () => ({ vagueness: 'high' }),
    proposeHypotheses: async () => ({
      digest: 'Sleep down 20 min.',
      hypotheses: [hypothesis('h1'), hypothesis('h2')],
      costUsd: 0.03,
      startedAt: '2026-01-01T00:00:00.000Z',
    }),
    // h1 survives the gates and the Critic; h2 passes the gates and the Critic rejects it.
    runGates: gatesSaying(),
    critiqueFinding: criticSaying({ 'inv-h2': 'reject' }),
  });

  expect(run.calls.names).toEqual([
    'startTurn',
    'recallMemory',
    'classifyVagueness',
    'proposeHypotheses',
    'testHypotheses',
    'runGates',
    'critiqueFinding',
    'critiqueFinding',
    'assessFinding',
    'writeBriefing',
    'checkAnswer',
    'rememberTurn',
    'completeTurn',
  ]);
  expect(run.calls.only('proposeHypotheses')).toMatchObject({ question: USER_MESSAGE, memory: MEMORY });
  expect(run.calls.only('testHypotheses').hypotheses.map((h) => h.id)).toEqual(['h1', 'h2']);
  expect(run.calls.only('runGates').findings.map((f) => f.finding.id)).toEqual(['inv-h1', 'inv-h2']);
  // Only what is not rejected is assessed.
  expect(run.calls.only('assessFinding').finding.id).toBe('inv-h1');

  const briefing = run.calls.only('writeBriefing');
  expect(briefing).toMatchObject({ question: USER_MESSAGE, digest: 'Sleep down 20 min.', memory: MEMORY });
  expect(briefing.validated.map((v) => [v.finding.id, v.verdict])).toEqual([
    ['inv-h1', 'validated'],
    ['inv-h2', 'rejected'],
  ]);
  expect(briefing.validated[1].assessment).toBeNull();
  expect(run.calls.only('checkAnswer')).toMatchObject({
    answer: 'Briefing on 2 findings.',
    userMessage: USER_MESSAGE,
    findings: [
      { finding: { id: 'inv-h1' }, verdict: 'validated', source: 'investigator' },
      { finding: { id: 'inv-h2' }, verdict: 'rejected', source: 'investigator' },
    ],
  });
  expect(run.calls.only('rememberTurn')).toMatchObject({
    answer: 'Briefing on 2 findings.',
    userMessage: USER_MESSAGE,
  });
  expect(run.calls.only('rememberTurn').validated.map((v) => v.verdict)).toEqual(['validated', 'rejected']);

  const result = completed(run);
  expect(result.answer).toBe('Briefing on 2 findings.');
  expect(result.agents_used).toEqual(['investigator']);
  // The fact sheet is the fact-check's, not synthesis's: synthesis never ran.
  expect(result.fact_sheet.map((entry) => entry.claim)).toEqual(['Claim inv-h1', 'Claim inv-h2']);
  expect(result.validator).toEqual({
    findings_total: 2,
    findings_validated: 1,
    findings_conditional: 0,
    findings_rejected: 1,
  });
  expect(run.calls.names).not.toContain('route');
  expect(run.calls.names).not.toContain('synthesise');
});

test('the Investigator without memory: `include_memory` false reaches recall, and the planner gets no memory', async () => {
  const run = await runTurn(
    { classifyVagueness: async () => ({ vagueness: 'high' }) },
    { input: { context: { include_memory: false, include_biomarkers: true } } },
  );

  expect(run.calls.only('recallMemory')).toEqual({
    userId: TURN_INPUT.userId,
    includeMemory: false,
    includeBiomarkers: true,
  });
  expect(run.calls.only('proposeHypotheses').memory).toBe('');
  expect(run.calls.only('writeBriefing').memory).toBe('');
  expect(completed(run).agents_used).toEqual(['investigator']);
});
