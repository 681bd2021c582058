/**
 * The schema of each model call's inputs (activities/runtime/model-call-inputs.ts), which the LLM client
 * sends the scripted model in the request body's `amy_step_inputs` (contracts/steps.ts). The scripted
 * model checks a request's inputs against its call's schema before any rule sees them, so rules read
 * typed values; a request without valid inputs is a 400 naming the call. Each schema must produce its
 * call's inputs type (the `satisfies` below), so the two cannot drift apart.
 */
import { z } from 'zod';
import { ROUTABLE_AGENTS, type ModelCallId } from '../../contracts/steps';
import {
  ANALYSIS_STATISTICS,
  DATA_TABLES,
  FINDING_KINDS,
  GATE_VERDICTS,
  findingSchema,
  gatesOutcomeSchema,
} from '../../contracts/findings';
import { factEntrySchema, messageSchema, personalAnchorEntrySchema } from '../../contracts/turn';
import { literaturePriorSchema } from '../../activities/data/literature-priors';
import { criticVerdictSchema } from '../../activities/steps/critic/verdict';
import { WEEKDAYS } from '../../activities/agents/investigator/digest';
import { DAILY_METRICS } from '../../contracts/health-records';
import type { ModelCallInputs } from '../../activities/runtime/model-call-inputs';

const conversation = z.object({ messages: z.array(messageSchema).min(1) });
const nullableNumber = z.number().nullable();

const analysisSpec = z.object({
  kind: z.enum(FINDING_KINDS),
  feature: z.string(),
  target: z.string().nullable(),
  windowDays: nullableNumber,
  statistic: z.enum(ANALYSIS_STATISTICS).optional(),
  offsetDays: z.number().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
  table: z.enum(DATA_TABLES).optional(),
  workoutType: z.string().optional(),
});

const personalAnchor = z.object({
  key: z.string(),
  label: z.string(),
  value: z.number(),
  unit: z.string().nullable(),
  n: z.number(),
  window: z.string(),
});

const shownFinding = z.object({
  finding: findingSchema,
  verdict: z.enum(['validated', 'conditional']),
  assessment: z.object({ mechanism: z.string(), strategy: z.string().nullable() }).nullable(),
});

const healthDigest = z.object({
  firstDate: z.string().nullable(),
  lastDate: z.string().nullable(),
  days: z.number(),
  metrics: z.array(
    z.object({
      metric: z.enum(DAILY_METRICS),
      recentMean: nullableNumber,
      nRecent: z.number(),
      priorMean: nullableNumber,
      nPrior: z.number(),
      mean: nullableNumber,
      sd: nullableNumber,
      n: z.number(),
      deltaSd: nullableNumber,
    }),
  ),
  sleepByWeekday: z.array(z.object({ weekday: z.enum(WEEKDAYS), meanSleepMinutes: nullableNumber, n: z.number() })),
  presence: z.array(
    z.object({ metric: z.enum(DAILY_METRICS), present: z.number(), days: z.number(), ratio: z.number() }),
  ),
  workouts: z.number(),
  topWorkoutTypes: z.array(z.object({ type: z.string(), sessions: z.number(), meanMinutes: z.number() })),
});

const testedHypothesis = z.object({
  findingId: z.string(),
  kind: z.enum(FINDING_KINDS).nullable(),
  feature: z.string(),
  target: z.string().nullable(),
  verdict: z.string(),
  effect: nullableNumber,
  claim: z.string(),
});

const synthesisFinding = z.object({
  finding: z.object({
    id: z.string(),
    claim: z.string(),
    numbers: z.record(z.string(), z.unknown()),
    n: z.number(),
    window: z.string(),
    unit: z.string().nullable().optional(),
  }),
  verdict: z.enum(GATE_VERDICTS),
  source: z.string(),
  assessment: z.object({ mechanism: z.string(), strategy: z.string().nullable() }).nullable().optional(),
});

const coachGate = conversation.extend({ question: z.string() });
const coachClosing = conversation.extend({ reply: z.string() });

const STEP_INPUT_SCHEMAS = {
  classify_vagueness: conversation,
  clarify: conversation,
  investigator_hypotheses: z.object({
    question: z.string(),
    digest: healthDigest,
    tested: z.array(testedHypothesis),
  }),
  investigator_briefing: z.object({
    question: z.string(),
    digest: z.string(),
    hypotheses: z.array(z.object({ title: z.string(), rationale: z.string(), findingId: z.string() })),
    validated: z.array(
      z.object({
        finding: z.object({ id: z.string(), claim: z.string(), numbers: findingSchema.shape.numbers }),
        verdict: z.enum(GATE_VERDICTS),
      }),
    ),
  }),
  route: conversation,
  fallback_reply: conversation,
  rephrase: conversation.extend({ agents: z.array(z.enum(ROUTABLE_AGENTS)).min(1) }),
  ds_plan: z.object({
    question: z.string(),
    dataDays: z.object({ first: z.string(), last: z.string() }).nullable(),
  }),
  ds_code: z.object({ question: z.string(), approach: z.string() }),
  ds_debug: z.object({ question: z.string(), approach: z.string(), code: z.string(), error: z.string() }),
  ds_summary: z.object({ question: z.string(), result: z.unknown() }),
  ds_extract: z.object({ question: z.string(), spec: analysisSpec, result: z.unknown(), summary: z.string() }),
  domain_expert: z.object({ question: z.string(), supportingInsights: z.string() }),
  'health_coach.gate': coachGate,
  'health_coach.main': coachGate.extend({
    verdict: z.enum(['YESREC', 'NOREC']),
    anchors: z.array(personalAnchor),
    findings: z.array(shownFinding),
    supportingInsights: z.string(),
    remindOfAnchors: z.boolean(),
  }),
  'health_coach.finish': coachClosing,
  'health_coach.summary': coachClosing,
  reflection: z.object({ userMessage: z.string(), mainDraft: z.string(), supportingInsights: z.string() }),
  critic: z.object({
    finding: findingSchema,
    statistic: z.enum(ANALYSIS_STATISTICS),
    gates: gatesOutcomeSchema,
    priors: z.array(literaturePriorSchema),
  }),
  assessment: z.object({ finding: findingSchema, critic: criticVerdictSchema, priors: z.array(literaturePriorSchema) }),
  synthesis: z.object({
    userMessage: z.string(),
    mainAgent: z.enum(ROUTABLE_AGENTS),
    mainAgentDraft: z.string(),
    supportingInsights: z.string(),
    findings: z.array(synthesisFinding),
    factSheet: z.array(factEntrySchema),
    personalAnchors: z.array(personalAnchorEntrySchema),
    dataScienceFailed: z.boolean(),
    repair: z
      .object({
        previousAnswer: z.string(),
        untraced: z.array(z.object({ value: z.number(), text: z.string() })),
      })
      .optional(),
    clarification: z.object({ question: z.string(), answer: z.string(), assumed: z.boolean() }).optional(),
  }),
  memory: z.object({ userMessage: z.string(), answer: z.string(), remembered: z.string() }),
} satisfies { [Call in ModelCallId]: z.ZodType<ModelCallInputs[Call]> };

export type StepInputsCheck<Call extends ModelCallId> =
  { ok: true; inputs: ModelCallInputs[Call] } | { ok: false; message: string };

/** A request's inputs checked against its call's schema; the message names the call and the first problem. */
export function parseStepInputs<Call extends ModelCallId>(call: Call, value: unknown): StepInputsCheck<Call> {
  if (value === undefined) {
    return {
      ok: false,
      message: `step "${call}": the request has no inputs (amy_step_inputs); rules answer from them`,
    };
  }
  const parsed = STEP_INPUT_SCHEMAS[call].safeParse(value);
  if (parsed.success) return { ok: true, inputs: parsed.data as ModelCallInputs[Call] };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    message: `step "${call}": invalid inputs: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
  };
}
