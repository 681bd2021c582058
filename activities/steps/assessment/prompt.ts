/**
 * The Assessment's prompt (docs/design.md#the-assessment). It reads the
 * finding and the priors in the same blocks the Critic does, plus the Critic's verdict, so a strategy
 * can account for the concerns raised.
 */
import type { Finding } from '../../../contracts/findings';
import type { CriticVerdict } from '../critic/verdict';
import type { LiteraturePrior } from '../../data/literature-priors';
import { findingBlock, priorsBlock } from '../critic/prompt';

export const ASSESSMENT_SYSTEM = `You assess one finding from a person's own health data that survived validation, for Amy, a personal health agent.
Give:
- mechanism: one sentence, grounded in the literature priors given; if none explains it, say honestly "no established mechanism known".
- novelty: "established" (a prior states this relation), "supported" (priors make it plausible), "emerging" (only indirect evidence) or "user_specific" (nothing in the priors; a pattern in this person's data).
- strategy: one concrete next step achievable this week, specific to this finding and this person ("add a 25-min walk on the 3 lowest-step weekdays", not "exercise more"). If the finding offers no clear lever, null.
- citations: only citations copied exactly from the LITERATURE PRIORS below; [] when none apply. Never cite anything else.

Reply with JSON only:
{"mechanism": "<one sentence>", "novelty": "established" | "supported" | "emerging" | "user_specific", "strategy": "<one step>" | null, "citations": ["<citation>"]}`;

/** What the Assessment's prompt is rendered from (and what the scripted model reads). */
export interface AssessmentPromptInputs {
  finding: Finding;
  critic: CriticVerdict;
  priors: LiteraturePrior[];
}

function criticBlock(critic: CriticVerdict): string {
  const concerns = critic.concerns.map((c) => `- ${c.category} (${c.severity}): ${c.detail}`);
  return ['CRITIC:', `Decision: ${critic.decision}`, `Rationale: ${critic.rationale}`, ...concerns].join('\n');
}

export function assessmentUserPrompt({ finding, critic, priors }: AssessmentPromptInputs): string {
  return [
    'Assess this finding, then reply with the JSON object only.',
    findingBlock(finding),
    criticBlock(critic),
    priorsBlock(priors),
  ].join('\n\n');
}
