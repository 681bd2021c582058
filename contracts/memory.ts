/**
 * The Memory resource (docs/design.md#memory): what Amy remembers about a user between turns. These schemas
 * validate the requests, describe the responses and generate the OpenAPI document.
 */
import { z } from 'zod';
import { ID_PREFIXES } from './ids';
import { POSTGRES_INSTANT_PROBLEM, isPostgresInstant } from './instant';
import { pageCursorSchema, pageLimitSchema, pageSchema } from './pagination';
import { jsonTextProblem, storableText } from './text';

const MAX_MEMORY_TEXT_CHARS = 500;
/** A client's own annotation on an entry: at most this many bytes of JSON, and this many keys. */
const MAX_MEMORY_META_BYTES = 2048;
const MAX_MEMORY_META_KEYS = 20;
/** Entries a user may write directly (the turn-written ones do not count): beyond it, delete some first. */
export const MAX_USER_MEMORY_ENTRIES = 1000;

/** The categories a client may write. */
export const MEMORY_CATEGORIES = ['goal', 'insight', 'preference', 'history'] as const;
/** Bookkeeping the validator writes for every processed finding; readable, never writable. */
export const TESTED_HYPOTHESIS = 'tested_hypothesis';
export const ALL_MEMORY_CATEGORIES = [...MEMORY_CATEGORIES, TESTED_HYPOTHESIS] as const;

export const memoryIdSchema = z
  .string()
  .regex(new RegExp(`^${ID_PREFIXES.memory}[0-9A-HJKMNP-TV-Z]{26}$`), 'must be a memory id (mem_<ULID>)');
export const isMemoryId = (value: string) => memoryIdSchema.safeParse(value).success;

/** What a `tested_hypothesis` entry, and an `insight` written from a validated finding, carry in `meta`. */
export const testedHypothesisMetaSchema = z.object({
  finding_id: z.string(),
  feature: z.string(),
  target: z.string().nullable(),
  verdict: z.string(),
  effect: z.number().nullable(),
});

const memoryMetaSchema = z.record(z.string(), z.unknown());

export const memorySchema = z.object({
  id: z.string(),
  text: z.string(),
  category: z.enum(ALL_MEMORY_CATEGORIES),
  created_at: z.string(),
  source_turn_id: z.string().nullable(),
  confidence: z.number().nullable(),
  meta: memoryMetaSchema
    .nullable()
    .describe(
      'For tested_hypothesis entries, and insight entries written from validated findings: { finding_id, feature, target, verdict, effect, tested }. Null or as the client wrote it otherwise.',
    ),
});
export type Memory = z.infer<typeof memorySchema>;

export const memoryListSchema = pageSchema(memorySchema);
export type MemoryList = z.infer<typeof memoryListSchema>;

const isoDateTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO-8601 date-time with Z or an offset' })
  .refine(isPostgresInstant, { error: POSTGRES_INSTANT_PROBLEM });

/**
 * `tested_hypothesis` entries are left out unless `include=tested_hypothesis` is passed or the
 * category filter names them: asking for that category by name is asking to see them.
 */
export const listMemoryQuerySchema = z
  .object({
    category: z
      .enum(ALL_MEMORY_CATEGORIES)
      .optional()
      .describe('Only this category; naming tested_hypothesis lists those entries without include.'),
    include: z.enum([TESTED_HYPOTHESIS]).optional().describe('Also list tested_hypothesis entries.'),
    after: isoDateTime.optional().describe('Only entries created strictly after this instant.'),
    before: isoDateTime.optional().describe('Only entries created strictly before this instant.'),
    limit: pageLimitSchema,
    cursor: pageCursorSchema,
  })
  .strict();
export type ListMemoryQuery = z.infer<typeof listMemoryQuerySchema>;

export const createMemoryRequestSchema = z
  .object({
    text: storableText().trim().min(1).max(MAX_MEMORY_TEXT_CHARS),
    category: z.enum(MEMORY_CATEGORIES, {
      error: `must be one of ${MEMORY_CATEGORIES.join(', ')} (${TESTED_HYPOTHESIS} is written only by the validator)`,
    }),
    confidence: z.number().min(0).max(1).default(1),
    // Memory written through the API needs no meta; a client may still attach its own annotation, which is
    // returned as written. It can never pass for validator bookkeeping: tested_hypothesis is not writable.
    meta: memoryMetaSchema
      .superRefine((meta, ctx) => {
        const problem = jsonTextProblem(meta);
        if (problem) ctx.addIssue({ code: 'custom', message: `every string ${problem}` });
        if (Object.keys(meta).length > MAX_MEMORY_META_KEYS) {
          ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_MEMORY_META_KEYS} keys` });
        }
        if (new TextEncoder().encode(JSON.stringify(meta)).length > MAX_MEMORY_META_BYTES) {
          ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_MEMORY_META_BYTES} bytes of JSON` });
        }
      })
      .nullable()
      .default(null),
  })
  .strict();
export type CreateMemoryRequest = z.infer<typeof createMemoryRequestSchema>;
