/**
 * Durable pauses for the user's answer (docs/api.md#asking-back): a turn whose request says the client can answer
 * (`interaction` on POST /v1/turns) may ask a question and wait for the answer, which comes back through
 * POST /v1/turns/:id/input. Without `interaction`, a turn never waits.
 *
 * Two kinds of question: a `clarification` when the question can be read in ways that give different answers, and
 * a `confirmation` before expensive work, with its estimated cost and duration. Each has options (an id and a
 * label), one of which is what the turn goes on with if the request expires (`default_option_id`).
 *
 * What workflow code needs at run time is in ./interaction-codes.ts, free of zod (the workflow bundle leaves it out).
 */
import { z } from 'zod';

const INPUT_KINDS = ['clarification', 'confirmation'] as const;
export type InputKind = (typeof INPUT_KINDS)[number];

/** How long a turn waits for an answer by default, and at most: a day, which Temporal holds at no cost. */
const DEFAULT_INPUT_TIMEOUT_SECONDS = 900;
const MAX_INPUT_TIMEOUT_SECONDS = 86_400;
const MIN_INPUT_TIMEOUT_SECONDS = 10;

export const interactionSchema = z
  .object({
    accepts: z
      .array(z.enum(INPUT_KINDS))
      .min(1)
      .describe('The kinds of question the client can answer; a turn asks no other kind.'),
    timeout_seconds: z
      .number()
      .int()
      .min(MIN_INPUT_TIMEOUT_SECONDS)
      .max(MAX_INPUT_TIMEOUT_SECONDS)
      .default(DEFAULT_INPUT_TIMEOUT_SECONDS)
      .describe('How long the turn waits for each answer before it goes on without one.'),
    on_expiry: z
      .enum(['continue', 'fail'])
      .default('continue')
      .describe(
        '`continue`: at the deadline the turn goes on with the default option, and its answer says so. ' +
          '`fail`: the turn fails with the code `input_expired`.',
      ),
  })
  .strict();
export type Interaction = z.infer<typeof interactionSchema>;

const inputOptionSchema = z.object({
  id: z.string().describe('What POST /v1/turns/:id/input names as `option_id`.'),
  label: z.string().describe('The option as a person reads it.'),
});
export type InputOption = z.infer<typeof inputOptionSchema>;

export const inputRequestSchema = z.object({
  request_id: z.string().describe('Names this question in the answer; a turn asks each question once.'),
  kind: z.enum(INPUT_KINDS),
  question: z.string(),
  options: z.array(inputOptionSchema).min(1),
  free_text: z.boolean().describe('Whether an answer may be text of the user’s own instead of an option.'),
  default_option_id: z.string().describe('The option the turn goes on with if the request expires.'),
  expires_at: z.string().describe('When the turn stops waiting (ISO 8601, UTC).'),
  estimate: z
    .object({ cost_usd: z.number(), duration_seconds: z.number() })
    .optional()
    .describe('For a confirmation: what the work asked about usually costs and takes.'),
});
export type InputRequest = z.infer<typeof inputRequestSchema>;

/**
 * The body of POST /v1/turns/:id/input: the request answered, and one of its options or (when it allows) text. Two
 * shapes rather than one with a rule, so that the OpenAPI document says exactly what is accepted.
 */
const requestIdField = z.string().min(1).describe('The `request_id` of the question answered.');
export const inputAnswerSchema = z.union([
  z.object({ request_id: requestIdField, option_id: z.string().min(1).describe('One of its options’ ids.') }).strict(),
  z
    .object({
      request_id: requestIdField,
      text: z.string().trim().min(1).max(2000).describe('An answer in the user’s words, when the question allows it.'),
    })
    .strict(),
]);
export type InputAnswer = z.infer<typeof inputAnswerSchema>;

/** What the turn went on with: the user's answer, or at the deadline the default. */
export const inputReceivedSchema = z.object({
  request_id: z.string(),
  option_id: z.string().nullable(),
  text: z.string().nullable(),
  source: z.enum(['user', 'expiry']),
  at: z.string(),
});
export type InputReceived = z.infer<typeof inputReceivedSchema>;
