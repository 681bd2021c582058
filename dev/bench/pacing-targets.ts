/**
 * The six shapes of turn that `npm run bench:pacing` measures, each with its question, the path it must
 * take, its targets for the first word of the answer and for the turn's end, and the product contract's
 * band for the whole turn. One table, so the bench, its summary, its report and the docs read the same
 * numbers.
 *
 * The targets hold under realistic pacing (dev/scripted-model/pacing.ts) and are what a user should wait,
 * at most: the first words of a checked answer early, the turn far inside the contract's band. The bands
 * are the contract's descriptions of how long each shape takes; it gives none for a knowledge question.
 */

export type ShapeId = 'fallback' | 'data_lookup' | 'knowledge' | 'data_domain' | 'coaching' | 'investigator';

export interface PacingShape {
  id: ShapeId;
  /** What the report calls it. */
  label: string;
  question: string;
  /** The agents a turn of this shape uses (`result.agents_used`, in any order): a turn that took another path is flagged. */
  agentsUsed: readonly string[];
  /** From the POST to the first delta of the answer a client receives. */
  firstWordTargetMs: number;
  /** From the POST to `turn.completed`. */
  completedTargetMs: number;
  /** The product contract's band for the whole turn, or null where it gives none. */
  contractBandMs: { low: number; high: number } | null;
}

const s = (seconds: number) => seconds * 1000;

export const PACING_SHAPES: readonly PacingShape[] = [
  {
    id: 'fallback',
    label: 'fallback',
    question: 'thanks!',
    agentsUsed: [],
    firstWordTargetMs: s(2),
    completedTargetMs: s(3),
    contractBandMs: { low: s(1.5), high: s(3) },
  },
  {
    id: 'data_lookup',
    label: 'data lookup',
    question: 'What is my average resting heart rate over the last 90 days?',
    agentsUsed: ['data_science'],
    firstWordTargetMs: s(10),
    completedTargetMs: s(30),
    contractBandMs: { low: s(60), high: s(90) },
  },
  {
    id: 'knowledge',
    label: 'knowledge',
    question: 'What is heart rate variability?',
    agentsUsed: ['domain_expert'],
    firstWordTargetMs: s(10),
    completedTargetMs: s(30),
    contractBandMs: null,
  },
  {
    id: 'data_domain',
    label: 'data + domain',
    question: 'What is my average resting heart rate over the last 90 days and is it a concern?',
    agentsUsed: ['data_science', 'domain_expert'],
    firstWordTargetMs: s(15),
    completedTargetMs: s(45),
    contractBandMs: { low: s(90), high: s(180) },
  },
  {
    id: 'coaching',
    label: 'coaching',
    question: 'Help me set a goal to walk more.',
    agentsUsed: ['health_coach'],
    firstWordTargetMs: s(15),
    completedTargetMs: s(45),
    contractBandMs: { low: s(120), high: s(240) },
  },
  {
    id: 'investigator',
    label: 'Investigator',
    question: 'Is there anything in my numbers worth knowing?',
    agentsUsed: ['investigator'],
    firstWordTargetMs: s(20),
    completedTargetMs: s(45),
    contractBandMs: { low: s(180), high: s(360) },
  },
];

/**
 * Whether an `agent.thought` delta is part of the answer: synthesis's channel (which the conversational
 * reply streams on too), or the Investigator's briefing, which is that turn's answer (docs/api.md's event
 * catalog, docs/streaming.md#retried-steps). The Investigator's own narration before it is not.
 */
export const isAnswerDelta = (thought: { agent: string; step?: string }): boolean =>
  thought.agent === 'synthesis' || (thought.agent === 'investigator' && thought.step === 'investigator_briefing');
