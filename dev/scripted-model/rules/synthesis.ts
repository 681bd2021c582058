import type { ModelCallInputs } from '../../../activities/runtime/model-call-inputs';
import { checkNumbers } from '../../../checks/fact-check';
import { isWindowLength } from '../../../checks/fact-sheet';
import { anchorReferences } from '../../../checks/personal-anchors';
import type { ScriptedRule } from '../types';

/**
 * Step 7: the answer, built only from the Fact Sheet and the findings it is given, so every
 * number it states is a fact-sheet value. With Data Science failed it states no number at all.
 *
 * `untracedNumber` makes it state one number that is in no reference, in a sentence of its own, to
 * exercise the binding fact-check: `first` on the first writing only (the repair, told which number,
 * leaves it out), `always` in the repair too (so the check removes the sentence).
 */
export type UntracedNumberMode = 'never' | 'first' | 'always';

type SynthesisInputs = ModelCallInputs['synthesis'];

interface Fact {
  claim: string;
  value: number;
  unit: string | null;
}

/**
 * The findings' numbers (a window's length is already in the finding's claim). The coach's personal anchors,
 * apart from the Fact Sheet, are the coach's to cite, in its draft, not the answer's paragraphs.
 */
const findingFacts = (inputs: SynthesisInputs): Fact[] =>
  inputs.factSheet.filter((entry) => !isWindowLength(entry.claim));

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

/** What the answer's numbers may trace to: the Fact Sheet, the anchors, the user's message, and the drafts it was given. */
const referencesOf = (inputs: SynthesisInputs) => ({
  sheet: {
    ...Object.fromEntries(inputs.factSheet.map((entry) => [entry.claim, entry.value])),
    ...anchorReferences(inputs.personalAnchors),
  },
  userMessage: inputs.clarification ? `${inputs.userMessage}\n${inputs.clarification.answer}` : inputs.userMessage,
  expertProse: `${inputs.mainAgentDraft}\n${inputs.supportingInsights}`,
});

/**
 * The sentences of an assessment's mechanism that state no number outside the references: its
 * literature counts ("across 66 studies") are not Fact Sheet numbers, so the answer leaves them out.
 */
function tracedSentences(text: string, inputs: SynthesisInputs): string {
  const references = referencesOf(inputs);
  return text
    .split(/(?<=[.!?])\s+/)
    .filter((sentence) => checkNumbers(sentence, references).untraced.length === 0)
    .join(' ');
}

/**
 * A sentence with a number the fact-check cannot trace: near the first fact's value, in its unit, moved
 * on until it matches no sheet value, ratio, or number the user or the drafts gave.
 */
function untracedSentence(inputs: SynthesisInputs): string {
  const fact = inputs.factSheet.find((entry) => entry.unit !== null) ?? inputs.factSheet[0];
  const unit = fact?.unit ?? 'minutes';
  const references = referencesOf(inputs);
  let value = Number((Math.abs(fact?.value ?? 40) * 1.37 + 11.3).toFixed(1));
  for (;;) {
    const sentence = `Compared with the month before, that is ${value} ${unit} higher.`;
    if (checkNumbers(sentence, references).untraced.length > 0) return sentence;
    value = Number((value + 7.3).toFixed(1));
  }
}

/** An answer that took the most likely reading because nobody said which they meant opens by saying so. */
function sayingWhatItAssumed(inputs: SynthesisInputs, text: string): string {
  if (!inputs.clarification?.assumed) return text;
  const reading = inputs.clarification.answer.replace(/[.?!]+$/, '');
  const asWords = /^[A-Z][a-z]/.test(reading) ? reading[0].toLowerCase() + reading.slice(1) : reading;
  return `You didn't answer my question in time, so I went with the most likely reading: ${asWords}.\n\n${text}`;
}

function answer(inputs: SynthesisInputs): string {
  const draft = leadingDraft(inputs);
  if (inputs.dataScienceFailed) {
    const followUp = draft || 'Could we narrow it down, for example to one metric over the last few weeks?';
    return `${DS_FAILED} ${followUp}`;
  }
  const facts = findingFacts(inputs);
  const paragraphs = shownFindings(inputs).map(({ finding, verdict, assessment }) => {
    const own = facts.filter((f) => f.claim.startsWith(`${finding.id}.`));
    const numbers = own
      .filter((f) => !f.claim.endsWith('.n'))
      .map(
        (f) =>
          `${f.claim.slice(finding.id.length + 1).replace(/_/g, ' ')} ${round(f.value)}${f.unit ? ` ${f.unit}` : ''}`,
      )
      .join(', ');
    const lead = verdict === 'conditional' ? 'A preliminary signal, worth tracking: ' : '';
    const mechanism = assessment?.mechanism ? ` ${tracedSentences(assessment.mechanism, inputs)}`.trimEnd() : '';
    return numbers ? `${lead}${finding.claim} (${numbers}).${mechanism}` : '';
  });
  // The coach's draft goes last, so the answer ends with the coach's forward question.
  return [...paragraphs, draft].filter(Boolean).join('\n\n') || NOTHING_HELD_UP;
}

export function synthesisRule(untracedNumber: UntracedNumberMode = 'never'): ScriptedRule<'synthesis'> {
  return {
    step: 'synthesis',
    respond({ inputs }) {
      const text = sayingWhatItAssumed(inputs, answer(inputs));
      const wrong = untracedNumber === 'always' || (untracedNumber === 'first' && !inputs.repair);
      if (!wrong) return { text };
      // Its own sentence at the end of the first paragraph, so removing it leaves the rest as it was.
      const [first, ...rest] = text.split('\n\n');
      return { text: [`${first} ${untracedSentence(inputs)}`, ...rest].join('\n\n') };
    },
  };
}
