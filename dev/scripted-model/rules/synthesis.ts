import type { ModelCallInputs } from '../../../activities/runtime/model-call-inputs';
import type { ScriptedRule } from '../types';

/**
 * Step 7 (seed 002): the answer, built only from the Fact Sheet and the findings it is given, so every
 * number it states is a fact-sheet value. With Data Science failed it states no number at all.
 */

type SynthesisInputs = ModelCallInputs['synthesis'];

interface Fact {
  claim: string;
  value: number;
  unit: string | null;
}

/** The findings' numbers; the coach's personal anchors are the coach's to cite, not the answer's paragraphs. */
const findingFacts = (inputs: SynthesisInputs): Fact[] =>
  inputs.factSheet.filter((entry) => entry.source !== 'personal_anchor');

/** The findings synthesis may state: the validated and the conditional ones. */
const shownFindings = (inputs: SynthesisInputs) => inputs.findings.filter((f) => f.verdict !== 'rejected');

const round = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toFixed(2))));

/** The Domain Expert's or the coach's own draft leads the answer; a Data Science draft is only notes. */
function leadingDraft(inputs: SynthesisInputs): string {
  if (inputs.mainAgent !== 'domain_expert' && inputs.mainAgent !== 'health_coach') return '';
  return inputs.mainAgentDraft.trim();
}

const DS_FAILED =
  "I couldn't complete the analysis of your data this time, so I won't quote a result I can't stand behind.";
const NOTHING_HELD_UP =
  "Nothing in your data held up well enough for me to state it with confidence, so I'd rather not quote numbers. " +
  "We'd need to look more closely with a narrower question.";

export const synthesis: ScriptedRule<'synthesis'> = {
  step: 'synthesis',
  respond(req) {
    const draft = leadingDraft(req.inputs);
    if (req.inputs.dataScienceFailed) {
      const followUp = draft || 'Could we narrow it down, for example to one metric over the last few weeks?';
      return { text: `${DS_FAILED} ${followUp}` };
    }
    const facts = findingFacts(req.inputs);
    const paragraphs = shownFindings(req.inputs).map(({ finding, verdict, assessment }) => {
      const own = facts.filter((f) => f.claim.startsWith(`${finding.id}.`));
      const numbers = own
        .filter((f) => !f.claim.endsWith('.n'))
        .map(
          (f) =>
            `${f.claim.slice(finding.id.length + 1).replace(/_/g, ' ')} ${round(f.value)}${f.unit ? ` ${f.unit}` : ''}`,
        )
        .join(', ');
      const lead = verdict === 'conditional' ? 'A preliminary signal, worth tracking: ' : '';
      const mechanism = assessment?.mechanism ? ` ${assessment.mechanism}` : '';
      return numbers ? `${lead}${finding.claim} (${numbers}).${mechanism}` : '';
    });
    // The coach's draft goes last, so the answer ends with the coach's forward question.
    const answer = [...paragraphs, draft].filter(Boolean).join('\n\n');
    return { text: answer || NOTHING_HELD_UP };
  },
};
