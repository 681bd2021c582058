/**
 * Validation as the workflow sequences it (workflows/validate-findings.ts): gates, then the Critic on what the
 * gates judged, descriptions included, then the Assessment on what is not rejected and not a description;
 * the coach's pre-validation hop; every finding validated exactly once; a gate runner that cannot run
 * rejects instead of failing the turn.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  AGENT,
  agentFinding,
  completed,
  criticSaying,
  describingFinding,
  gatesSaying,
  MEMORY,
  routing,
  upstreamUnavailable,
  useWorkflowEnvironment,
  type Fakes,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

const threeFindings: Fakes['extractFindings'] = async ({ idPrefix }) => ({
  findings: [agentFinding(`${idPrefix}-001`), agentFinding(`${idPrefix}-002`), agentFinding(`${idPrefix}-003`)],
  descriptive: false,
  costUsd: 0,
});

test('the pre-validation hop: the coach sees only validated and conditional findings, and nothing is validated twice', async () => {
  const run = await runTurn({
    route: async () => routing(HC, [DS]),
    extractFindings: threeFindings,
    // ds-001 validated; ds-002 downgraded by the Critic to conditional; ds-003 rejected by the gates.
    runGates: gatesSaying({ 'ds-003': 'rejected' }),
    critiqueFinding: criticSaying({ 'ds-002': 'downgrade' }),
  });

  const names = run.calls.names;
  expect(names.indexOf('runGates')).toBeLessThan(names.indexOf('coachUser'));
  expect(run.calls.only('runGates').findings.map((f) => f.finding.id)).toEqual(['ds-001', 'ds-002', 'ds-003']);
  // The Critic judges everything the gates could judge; the Assessment only what is not rejected.
  expect(run.calls.inputsOf('critiqueFinding').map((c) => c.finding.id)).toEqual(['ds-001', 'ds-002', 'ds-003']);
  expect(
    run.calls
      .inputsOf('assessFinding')
      .map((a) => a.finding.id)
      .sort(),
  ).toEqual(['ds-001', 'ds-002']);
  expect(names.lastIndexOf('assessFinding')).toBeLessThan(names.indexOf('coachUser'));

  const coach = run.calls.only('coachUser');
  expect(coach.findings.map((f) => [f.finding.id, f.verdict])).toEqual([
    ['ds-001', 'validated'],
    ['ds-002', 'conditional'],
  ]);
  expect(coach.findings[1].assessment).toEqual({ mechanism: 'Mechanism of ds-002', strategy: 'Strategy for ds-002' });

  // Synthesis gets every finding, the rejected one with its verdict, from the one validation.
  expect(run.calls.only('synthesise').findings.map((f) => [f.finding.id, f.verdict, f.assessment?.mechanism])).toEqual([
    ['ds-001', 'validated', 'Mechanism of ds-001'],
    ['ds-002', 'conditional', 'Mechanism of ds-002'],
    ['ds-003', 'rejected', undefined],
  ]);
  expect(run.calls.only('rememberTurn').validated.map((v) => v.verdict)).toEqual([
    'validated',
    'conditional',
    'rejected',
  ]);
  expect(completed(run).validator).toEqual({
    findings_total: 3,
    findings_validated: 1,
    findings_conditional: 1,
    findings_rejected: 1,
  });
});

test('the coach with a reflection follow-up: pre-validated findings are not validated again, the follow-up’s are', async () => {
  const run = await runTurn({
    route: async () => routing(HC, [DS]),
    reflect: async () => ({ dataScience: 'And on weekdays?', domainExpert: null }),
  });

  expect(run.calls.inputsOf('runGates').map((g) => g.findings.map((f) => f.finding.id))).toEqual([
    ['ds-001'],
    ['dsr-001'],
  ]);
  expect(run.calls.inputsOf('critiqueFinding').map((c) => c.finding.id)).toEqual(['ds-001', 'dsr-001']);
  const names = run.calls.names;
  expect(names.indexOf('coachUser')).toBeGreaterThan(names.indexOf('runGates'));
  expect(names.lastIndexOf('runGates')).toBeGreaterThan(names.indexOf('reflect'));
  expect(run.calls.only('synthesise').findings.map((f) => f.finding.id)).toEqual(['ds-001', 'dsr-001']);
  expect(completed(run).validator.findings_validated).toBe(2);
});

test('the Critic’s reject overrides the gates, and a rejected finding gets no assessment', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    extractFindings: threeFindings,
    critiqueFinding: criticSaying({ 'ds-001': 'reject', 'ds-002': 'downgrade' }),
    runGates: gatesSaying({ 'ds-003': 'conditional' }),
  });

  expect(
    run.calls
      .inputsOf('assessFinding')
      .map((a) => a.finding.id)
      .sort(),
  ).toEqual(['ds-002', 'ds-003']);
  // The Critic gets the gates' outcome to judge.
  expect(run.calls.inputsOf('critiqueFinding').map((c) => c.gates.verdict)).toEqual([
    'validated',
    'validated',
    'conditional',
  ]);
  expect(run.calls.only('synthesise').findings.map((f) => f.verdict)).toEqual([
    'rejected',
    'conditional',
    'conditional',
  ]);
  expect(completed(run).validator).toEqual({
    findings_total: 3,
    findings_validated: 0,
    findings_conditional: 2,
    findings_rejected: 1,
  });
});

test('a description is counted validated only when its gates pass and the Critic accepts; it is not assessed', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    extractFindings: async ({ idPrefix }) => ({
      findings: [
        describingFinding(`${idPrefix}-001`),
        describingFinding(`${idPrefix}-002`),
        describingFinding(`${idPrefix}-003`),
        agentFinding(`${idPrefix}-004`),
      ],
      descriptive: false,
      costUsd: 0,
    }),
    // ds-002: too few days for its mean (sample_size, a hard gate); ds-003: the Critic downgrades it.
    runGates: gatesSaying({ 'ds-002': 'rejected' }),
    critiqueFinding: criticSaying({ 'ds-003': 'downgrade' }),
  });

  // The Critic reviews every description, told what it computed.
  expect(run.calls.inputsOf('critiqueFinding').map((c) => [c.finding.id, c.statistic])).toEqual([
    ['ds-001', 'mean'],
    ['ds-002', 'mean'],
    ['ds-003', 'mean'],
    ['ds-004', 'change'],
  ]);
  // A level has no mechanism or strategy: only the inference is assessed.
  expect(run.calls.inputsOf('assessFinding').map((a) => a.finding.id)).toEqual(['ds-004']);
  expect(run.calls.only('rememberTurn').validated.map((f) => [f.finding.id, f.verdict, f.critic?.decision])).toEqual([
    ['ds-001', 'validated', 'accept'],
    ['ds-002', 'rejected', 'accept'],
    ['ds-003', 'conditional', 'downgrade'],
    ['ds-004', 'validated', 'accept'],
  ]);
  expect(completed(run).validator).toEqual({
    findings_total: 4,
    findings_validated: 2,
    findings_conditional: 1,
    findings_rejected: 1,
  });
});

test('a description reported as a fact by the gates of the release before goes on unreviewed, as its turn began', async () => {
  const run = await runTurn({
    route: async () => routing(DS),
    extractFindings: async ({ idPrefix }) => ({
      findings: [describingFinding(`${idPrefix}-001`)],
      descriptive: true,
      costUsd: 0,
    }),
    runGates: async ({ findings }) =>
      findings.map(({ finding }) => ({
        finding_id: finding.id,
        gates: [{ gate: 'reproduction', verdict: 'passed', detail: { applicable: true } }],
        verdict: 'validated',
        hard_rejection: null,
        passes: 0,
        applicable: 0,
        fact: true,
      })),
  });

  expect(run.calls.names).not.toContain('critiqueFinding');
  expect(run.calls.names).not.toContain('assessFinding');
  expect(completed(run).validator.findings_validated).toBe(1);
});

test('a gate runner that cannot run rejects every finding, without Critic or Assessment, and the turn completes', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    extractFindings: threeFindings,
    runGates: async () => {
      throw upstreamUnavailable();
    },
  });

  expect(run.calls.count('runGates')).toBe(1);
  expect(run.calls.names).not.toContain('critiqueFinding');
  expect(run.calls.names).not.toContain('assessFinding');
  expect(run.calls.names).not.toContain('failTurn');
  expect(run.calls.only('synthesise').findings.map((f) => f.verdict)).toEqual(['rejected', 'rejected', 'rejected']);
  expect(completed(run).validator).toEqual({
    findings_total: 3,
    findings_validated: 0,
    findings_conditional: 0,
    findings_rejected: 3,
  });
});

test('no findings: no validation activity runs at all', async () => {
  const run = await runTurn({
    route: async () => routing(DE, [DS]),
    extractFindings: async () => ({ findings: [], descriptive: true, costUsd: 0 }),
  });

  expect(run.calls.names).not.toContain('runGates');
  expect(run.calls.only('synthesise').findings).toEqual([]);
  expect(completed(run).validator.findings_total).toBe(0);
});

describe('a Critic or an Assessment whose model is unreachable', () => {
  const overloaded = () =>
    ApplicationFailure.create({ type: 'UpstreamUnavailableError', message: 'Anthropic returned 529 overloaded' });

  test('is retried by Temporal, and a verdict that comes within the budget is the verdict', async () => {
    let attempts = 0;
    const run = await runTurn({
      route: async () => routing(DS),
      critiqueFinding: async (input) => {
        if (++attempts < 3) throw overloaded();
        return criticSaying()(input);
      },
    });

    expect(attempts).toBe(3);
    expect(run.calls.names).not.toContain('recordCriticFallback');
    expect(run.calls.only('synthesise').findings.map((f) => f.verdict)).toEqual(['validated']);
  });

  test('falls back to the conservative downgrade only once the budget is spent, and the turn completes', async () => {
    const run = await runTurn({
      route: async () => routing(DS),
      extractFindings: threeFindings,
      critiqueFinding: async () => {
        throw upstreamUnavailable();
      },
      assessFinding: async () => {
        throw upstreamUnavailable();
      },
    });

    // Each finding's Critic spends its retries on its own parallel branch, so the fallbacks are recorded
    // in whatever order the branches give up: which findings fell back is the point, not the order.
    expect(
      run.calls
        .inputsOf('recordCriticFallback')
        .map((c) => c.findingId)
        .sort(),
    ).toEqual(['ds-001', 'ds-002', 'ds-003']);
    expect(run.calls.only('synthesise').findings.map((f) => [f.verdict, f.assessment ?? null])).toEqual([
      ['conditional', null],
      ['conditional', null],
      ['conditional', null],
    ]);
    expect(run.calls.names).not.toContain('failTurn');
    expect(completed(run).validator.findings_conditional).toBe(3);
  });
});

test('the Critic and the Assessment get the memory read at the start of the turn, read once', async () => {
  const run = await runTurn({ route: async () => routing(DS), extractFindings: threeFindings });
  expect(run.calls.inputsOf('critiqueFinding').map((c) => c.memory)).toEqual([MEMORY, MEMORY, MEMORY]);
  expect(run.calls.inputsOf('assessFinding').map((c) => c.memory)).toEqual(
    run.calls.inputsOf('assessFinding').map(() => MEMORY),
  );
  expect(run.calls.inputsOf('recallMemory')).toHaveLength(1);
});

test('include_memory: false reaches the Critic: a turn isolated from memory is isolated in validation too', async () => {
  const run = await runTurn(
    { route: async () => routing(DS), extractFindings: threeFindings },
    { input: { context: { include_memory: false, include_biomarkers: true } } },
  );
  expect(run.calls.inputsOf('critiqueFinding').map((c) => c.memory)).toEqual(['', '', '']);
  expect(run.calls.only('recallMemory').includeMemory).toBe(false);
});
