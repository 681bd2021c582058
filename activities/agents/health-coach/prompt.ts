/**
 * The Health Coach's prompts (docs/design.md#health-coach; paper §6.2, modular coaching): a gate
 * that decides whether to recommend yet, the coaching response parameterised by that verdict, a gate
 * that decides whether the conversation is done, and its closing summary. Splitting the decision to
 * recommend from the response is what keeps the coach from recommending before it knows enough.
 *
 * User prompts are labelled blocks (CONVERSATION, QUESTION, PERSONAL ANCHORS, FINDINGS, …), one fact
 * per line, so the model reads each anchor and finding unambiguously.
 */
import type { Message } from '../../../contracts/turn';
import { renderHistory } from '../../runtime/conversation';
import type { PersonalAnchor } from './anchors';
import type { RecommendVerdict, ShownFinding } from './types';

export const HC_RECOMMEND_GATE = `You are the recommendation gate of a health coach. You do not coach; you decide whether the coach should give a recommendation in this reply.
Answer YESREC when the user asks for a plan, a goal, advice or help to change something, or has already given what a good recommendation needs (what they want to change, what gets in the way, what they can commit to).
Answer NOREC when the user is still describing their situation, asks to understand rather than to act, or a recommendation now would be premature or generic.
Answer with exactly one line: [VERDICT]: YESREC or [VERDICT]: NOREC`;

const MODE: Record<RecommendVerdict, string> = {
  YESREC: `Current mode: YESREC. Deliver ONE SMART recommendation now: specific, measurable, achievable, relevant to the question and time-bound, built on the user's own numbers (and on a finding's strategy when one fits). One recommendation, not a list. Do not re-ask for context you already have.`,
  NOREC: `Current mode: NOREC. Do not recommend anything yet. Reflect back what the user's numbers show, then ask ONE focused question that gathers what a good recommendation needs (their goal, what gets in the way, their routine, what they have tried).`,
};

/** The coaching response's system prompt; the verdict decides whether it recommends or keeps gathering context. */
export function HC_SYSTEM(verdict: RecommendVerdict): string {
  return `You are the health coach of Amy, a personal health assistant: warm, direct and practical, in the style of motivational interviewing, coaching one person on their own wearable data.
Rules:
1. Reference at least one PERSONAL ANCHOR: state its value exactly as listed, with its unit and window. These are the user's own numbers; they make the advice specific to this person instead of textbook generic. Never invent a number or round one differently.
2. Ground what you say in the FINDINGS when they are relevant: state VALIDATED ones plainly, call CONDITIONAL ones a preliminary signal. Use a finding's strategy when it fits the question.
3. Use SUPPORTING INSIGHTS as context; do not repeat them wholesale.
4. Be brief: one or two short paragraphs, no headings.
5. End with one forward-looking question to the user.
${MODE[verdict]}`;
}

export const HC_FINISH_GATE = `You decide whether a health-coaching conversation is complete, after the coach's latest reply.
Answer FINISH when the user is wrapping up (thanks, that's all, goodbye) or says they have what they need.
Answer CONTINUE otherwise, including whenever the user is still asking, deciding or describing their situation.
Answer with exactly one word: FINISH or CONTINUE`;

export const HC_SUMMARY = `Write the closing summary of a health-coaching conversation: one or two sentences recapping the step the user is taking and encouraging them to check back in.
State no numbers and give no new advice.`;

/** Free text on one line, so a newline inside it cannot pass for the next line's fact. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function personalAnchorsBlock(anchors: PersonalAnchor[]): string {
  if (anchors.length === 0) return '(none: too few recent days of data)';
  return anchors
    .map((a) => `- ${a.key} = ${a.value}${a.unit ? ` ${a.unit}` : ''} (n=${a.n}, ${a.window}): ${a.label}`)
    .join('\n');
}

const formatNumbers = (numbers: ShownFinding['finding']['numbers']) =>
  Object.entries(numbers)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? `[${value.join(', ')}]` : value}`)
    .join(', ');

function coachFindingsBlock(findings: ShownFinding[]): string {
  if (findings.length === 0) return '(none)';
  return findings
    .map(({ finding, verdict, assessment }) => {
      const lines = [
        `- ${finding.id} [${verdict.toUpperCase()}]: ${oneLine(finding.claim)}`,
        `  numbers: ${formatNumbers(finding.numbers)} (n=${finding.n}, ${finding.window})`,
      ];
      if (assessment?.mechanism) lines.push(`  mechanism: ${oneLine(assessment.mechanism)}`);
      if (assessment?.strategy) lines.push(`  strategy: ${oneLine(assessment.strategy)}`);
      return lines.join('\n');
    })
    .join('\n');
}

const ANCHOR_REMINDER = `ANCHOR REMINDER:
Your previous draft quoted none of the PERSONAL ANCHORS. Write the reply again, and this time state at least one anchor's value exactly as listed above, with its unit, and build the advice on it.`;

/*
 * Each call's prompts are rendered from an inputs object, the same object the scripted model reads for
 * the call (activities/runtime/model-call-inputs.ts).
 */

export interface CoachGatePromptInputs {
  /** The conversation so far, the current user message last. */
  messages: Message[];
  /** The coach's (rephrased) question. */
  question: string;
}

export function hcGatePrompt({ messages, question }: CoachGatePromptInputs): string {
  return `CONVERSATION:\n${renderHistory(messages)}\n\nQUESTION:\n${question}`;
}

export interface CoachMainPromptInputs extends CoachGatePromptInputs {
  /** The recommend gate's verdict: it sets the system prompt's mode (HC_SYSTEM). */
  verdict: RecommendVerdict;
  anchors: PersonalAnchor[];
  findings: ShownFinding[];
  supportingInsights: string;
  /** Set on the one extra call made when the first reply cited no anchor. */
  remindOfAnchors: boolean;
}

export function hcMainPrompt(input: CoachMainPromptInputs): string {
  return [
    `CONVERSATION:\n${renderHistory(input.messages)}`,
    `QUESTION:\n${input.question}`,
    `PERSONAL ANCHORS:\n${personalAnchorsBlock(input.anchors)}`,
    `FINDINGS:\n${coachFindingsBlock(input.findings)}`,
    `SUPPORTING INSIGHTS:\n${input.supportingInsights.trim() || '(none)'}`,
    input.remindOfAnchors ? ANCHOR_REMINDER : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The finish gate and the closing summary read the same thing: the conversation and the coach's reply. */
export interface CoachClosingPromptInputs {
  messages: Message[];
  reply: string;
}

export function hcClosingPrompt({ messages, reply }: CoachClosingPromptInputs): string {
  return `CONVERSATION:\n${renderHistory(messages)}\n\nCOACH REPLY:\n${reply}`;
}
