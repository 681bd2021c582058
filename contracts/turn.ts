import { inputRequestSchema, interactionSchema } from './interaction';
import { z } from 'zod';
import { MAX_MESSAGE_CHARS, MAX_MESSAGES } from './conversation-limits';
import { turnErrorBodySchema } from './errors';
import { pageCursorSchema, pageLimitSchema, pageSchema } from './pagination';
import { AGENTS } from './steps';
import { storableText } from './text';

export const messageSchema = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: storableText()
      .min(1)
      .max(MAX_MESSAGE_CHARS)
      .describe(
        `1 to ${MAX_MESSAGE_CHARS} characters, counted as Unicode code points (an emoji is one; a flag or a family made of several code points is several).`,
      ),
  })
  .strict();
export type Message = z.infer<typeof messageSchema>;

const turnContextSchema = z
  .object({
    include_memory: z.boolean().default(true),
    include_biomarkers: z.boolean().default(true),
  })
  .strict();
export type TurnContext = z.infer<typeof turnContextSchema>;

export const createTurnRequestSchema = z
  .object({
    messages: z
      .array(messageSchema)
      .min(1)
      .max(MAX_MESSAGES)
      .describe(
        `The whole conversation, 1 to ${MAX_MESSAGES} messages, the last one the user's; the Turn keeps it as sent.`,
      ),
    stream: z.boolean().default(true),
    context: turnContextSchema.default({ include_memory: true, include_biomarkers: true }),
    interaction: interactionSchema
      .optional()
      .describe(
        'Lets the turn ask the user a question and wait for the answer (docs/api.md#asking-back); without it, a turn never waits.',
      ),
  })
  .strict();
export type CreateTurnRequest = z.infer<typeof createTurnRequestSchema>;

export type { AgentName } from './steps';

export const factEntrySchema = z.object({
  claim: z.string(),
  value: z.number(),
  unit: z.string().nullable(),
  source: z.string(),
  n: z.number().nullable(),
  window: z.string().nullable(),
  verdict: z.literal('conditional').optional(),
});
export type FactEntry = z.infer<typeof factEntrySchema>;

/**
 * A personal anchor (docs/design.md#personal-anchors): a number about the user that our own code computed from
 * their rows for the Health Coach to cite (a recent mean, or its change). Not a finding, so not on the fact
 * sheet; the fact-check traces an answer's number to it all the same.
 */
export const personalAnchorEntrySchema = z.object({
  claim: z
    .string()
    .describe('anchor.<metric>_mean_14d or anchor.<metric>_change_14d: the name the answer and the fact-check use.'),
  label: z.string().describe('What it is, in words ("average nightly sleep").'),
  value: z.number(),
  unit: z.string().nullable(),
  n: z.number().int().describe('The days with a value it was computed from.'),
  window: z.string().describe('The days it covers, counted back from the latest day in the data.'),
});
export type PersonalAnchorEntry = z.infer<typeof personalAnchorEntrySchema>;

const validatorCountsSchema = z.object({
  findings_total: z.number().int(),
  findings_validated: z.number().int(),
  findings_conditional: z.number().int(),
  findings_rejected: z.number().int(),
});
export type ValidatorCounts = z.infer<typeof validatorCountsSchema>;

/** A number of the answer as first written that traces to no reference (docs/design.md#the-fact-check). */
const factCheckIssueSchema = z.object({ value: z.number(), severity: z.literal('warn') });
export type FactCheckIssue = z.infer<typeof factCheckIssueSchema>;

/** A number still untraced after the repair, and what was done so the answer no longer states it. */
const factCheckRemovalSchema = z.object({
  value: z.number(),
  sentence: z.string().describe('The sentence that held the number, as the answer had it.'),
  action: z
    .enum(['dropped_sentence', 'hedged_number'])
    .describe(
      'dropped_sentence: the sentence is gone; hedged_number: dropping it would have left no answer, ' +
        'so the number was replaced by a hedge.',
    ),
});
export type FactCheckRemoval = z.infer<typeof factCheckRemovalSchema>;

/**
 * The binding fact-check's outcome (step 7b): what the check found in the answer as first written, and
 * how the answer was repaired. Whatever it found, the answer the Turn holds states no untraced number.
 */
export const factCheckOutcomeSchema = z.object({
  numbers_checked: z
    .number()
    .int()
    .min(0)
    .describe(
      'How many numbers of the first answer were checked (list indices, years, dates, ids, links and citations are not).',
    ),
  issues: z.array(factCheckIssueSchema).describe('The numbers of the first answer that traced to nothing.'),
  repairs: z.object({
    resynthesised: z.boolean().describe('Synthesis wrote the answer once more, told which numbers did not trace.'),
    removed: z
      .array(factCheckRemovalSchema)
      .describe(
        'Numbers still untraced after that (at once, for the fallback reply and the Investigator briefing), ' +
          'removed from the answer.',
      ),
  }),
});
export type FactCheckOutcome = z.infer<typeof factCheckOutcomeSchema>;

export const turnResultSchema = z.object({
  answer: z.string().min(1),
  fact_sheet: z
    .array(factEntrySchema)
    .describe(
      'Every validated number the answer may cite, with its provenance: only findings that survived validation ' +
        '(a conditional one tagged, for the answer to hedge).',
    ),
  personal_anchors: z
    .array(personalAnchorEntrySchema)
    .describe(
      "The Health Coach's personal anchors: the user's own recent levels, computed by our code from their rows for " +
        'the coach to cite. Not validated findings, so not on the fact sheet; a number of the answer may trace to ' +
        'one. Empty when the coach did not run; absent from turns answered before it was a field of its own ' +
        '(their anchors are on the fact sheet, with source personal_anchor).',
    )
    .optional(),
  agents_used: z.array(z.enum(AGENTS)),
  validator: validatorCountsSchema,
  cost_usd: z.number(),
  duration_ms: z.number().int(),
  /** The fact-check's outcome; turns completed before the check was binding have none. */
  fact_check: factCheckOutcomeSchema
    .describe(
      'The numeric fact-check (step 7b): what it found in the answer as first written and how the answer was repaired. ' +
        'The answer states no number that does not trace to the fact sheet, the personal anchors, the user message or the Domain Expert.',
    )
    .optional(),
});
export type TurnResult = z.infer<typeof turnResultSchema>;

const TURN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
/** A turn's lifecycle as stored: queued → running → completed | failed. */
export type TurnStatus = (typeof TURN_STATUSES)[number];

/**
 * The status a client reads: a running turn that waits for the user's answer (docs/api.md#asking-back) reads
 * `waiting_for_input`, its question in `pending_input`. Only a turn whose request carried `interaction` ever does.
 */
const TURN_API_STATUSES = [...TURN_STATUSES, 'waiting_for_input'] as const;

/**
 * Live progress of a queued or running turn: the steps from the workflow's `progress` query, and the
 * cost so far from the llm_calls ledger (calls that have ended, failed attempts included).
 */
const turnProgressSchema = z.object({
  /** A step id from contracts/steps.ts; a step that runs more than once (the debug loop, per finding) is listed per run. */
  current_step: z.string().nullable(),
  completed_steps: z.array(z.string()),
  agents_started: z.array(z.enum(AGENTS)),
  cost_usd_so_far: z.number(),
});
export type TurnProgress = z.infer<typeof turnProgressSchema>;

/** An attempt of a turn that failed before an operator retried it (`npm run turn:retry`). */
const previousAttemptSchema = z.object({
  attempt: z.number().int().min(1),
  error: turnErrorBodySchema.nullable(),
  ended_at: z.string().nullable(),
});
export type PreviousAttempt = z.infer<typeof previousAttemptSchema>;

/**
 * The snapshot of the user's health data the turn computes over (docs/design.md#one-snapshot-of-the-users-data-per-turn):
 * when it was taken and how many rows of each kind it holds.
 */
const turnDataSnapshotSchema = z.object({
  taken_at: z.string().describe('When the snapshot was taken (ISO 8601, UTC).'),
  daily_rows: z.number().int().min(0).describe('Daily summaries in the snapshot.'),
  workouts: z.number().int().min(0).describe('Workouts in the snapshot.'),
  lab_results: z.number().int().min(0).describe('Lab results in the snapshot.'),
  lab_results_withheld: z
    .boolean()
    .describe(
      'True when the turn said context.include_biomarkers: false: its lab results were left out of the snapshot ' +
        '(lab_results is 0), so no step of the turn, and no model, saw any.',
    ),
  profile: z.boolean().describe('Whether the user had a profile when it was taken.'),
});
export type TurnDataSnapshot = z.infer<typeof turnDataSnapshotSchema>;

export const turnSchema = z.object({
  id: z.string(),
  status: z.enum(TURN_API_STATUSES),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  messages: z.array(messageSchema),
  result: turnResultSchema.nullable(),
  error: turnErrorBodySchema.nullable(),
  /** 1, or more once a failed turn was retried; `status`, `result` and `error` are the current attempt's. */
  attempt: z.number().int().min(1),
  /** The failed attempts before the current one, oldest first. */
  previous_attempts: z.array(previousAttemptSchema),
  /**
   * Once the turn has ended: every model call charged to it, failed attempts included (for a completed
   * turn, `result.cost_usd`). Null while it runs; `progress.cost_usd_so_far` has the running total.
   */
  cost_usd: z.number().nullable(),
  /**
   * The id of the last event in the turn's log when the Turn was read (0 before the first), so
   * `stream(id, { lastEventId: turn.last_event_id })` continues exactly after this snapshot.
   */
  last_event_id: z.number().int().min(0),
  /**
   * The user's data as the turn read it: every step of the turn computes over this one snapshot, taken by its
   * first step that reads the data. Null while no step has read it, and for turns that never do.
   */
  data_snapshot: turnDataSnapshotSchema
    .nullable()
    .describe(
      "The snapshot of the user's health data every step of the turn computed over: taken by the turn's first " +
        'step that reads the data, kept as long as the turn. Null until a step reads the data, and for turns that never do.',
    ),
  /** Only on GET while the turn is queued or running, and left out when the workflow cannot be asked in time. */
  progress: turnProgressSchema.optional(),
  pending_input: inputRequestSchema
    .optional()
    .describe(
      'While the status is waiting_for_input: the question the turn waits on (as turn.input_required gave it).',
    ),
});
export type Turn = z.infer<typeof turnSchema>;

/** A Turn as a list carries it: as stored, without `progress`, which only GET /v1/turns/:id asks the workflow for. */
const listedTurnSchema = turnSchema.omit({ progress: true });

export const turnListSchema = pageSchema(listedTurnSchema);
export type TurnList = z.infer<typeof turnListSchema>;

export const listTurnsQuerySchema = z
  .object({
    status: z
      .enum(TURN_STATUSES)
      .optional()
      .describe('Only turns with this status (`running` includes those waiting for input, which are running).'),
    limit: pageLimitSchema,
    cursor: pageCursorSchema,
  })
  .strict();
export type ListTurnsQuery = z.infer<typeof listTurnsQuerySchema>;
