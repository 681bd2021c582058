/**
 * What the Critic answers, as the model must write it and as the verdict goes on: a decision, the
 * concerns behind it and a rationale. Kept apart from the step so the Assessment's prompt and the
 * workflow can name the verdict without importing the step.
 */
import { z } from 'zod';

const CRITIC_DECISIONS = ['accept', 'downgrade', 'reject'] as const;
export type CriticDecision = (typeof CRITIC_DECISIONS)[number];

const CONCERN_CATEGORIES = [
  'confounder',
  'reverse_causation',
  'selection_bias',
  'literature_contradiction',
  'tautology',
  'small_n',
  'noise',
] as const;
const CONCERN_SEVERITIES = ['low', 'medium', 'high'] as const;

const concernSchema = z.object({
  category: z.enum(CONCERN_CATEGORIES),
  detail: z.string().min(1),
  severity: z.enum(CONCERN_SEVERITIES),
});

/** The model's answer, as the Critic's prompt asks for it. */
export const criticAnswerSchema = z.object({
  decision: z.enum(CRITIC_DECISIONS),
  concerns: z.array(concernSchema),
  rationale: z.string().min(1),
});
export type CriticAnswer = z.infer<typeof criticAnswerSchema>;

/** The verdict on one finding, as the step returns it and the Assessment's prompt reads it. */
export const criticVerdictSchema = criticAnswerSchema.extend({
  finding_id: z.string(),
  /** True when the model's answer could not be used and the conservative default was returned instead. */
  fallback: z.boolean(),
});
export type CriticVerdict = z.infer<typeof criticVerdictSchema>;
