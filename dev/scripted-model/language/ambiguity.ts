/**
 * Where a question about the user's own numbers can be read in ways that give different answers, as a careful
 * person would notice it (the `clarify` call, activities/steps/clarify): "my sleep" (its duration, its score or
 * its deep sleep), "my cholesterol" (total, LDL or HDL), or a recent period without its length ("lately"). The
 * options are written as the user's reply, so the conversation with the answer appended reads as a follow-up
 * (./understand-question.ts), and the first is the reading the question gets without asking.
 */
import type { Ambiguity } from '../../../activities/steps/clarify';
import { mentionedMetrics } from './metrics';
import { VAGUE_WINDOW } from './time-window';
import { normaliseMessage, understand, type ConversationMessage } from './understand-question';
import { hasAny } from './words';

export interface ScriptedAmbiguity {
  about: Ambiguity;
  question: string;
  options: { id: string; label: string }[];
  likelyOptionId: string;
  freeText: boolean;
}

const SLEEP: ScriptedAmbiguity = {
  about: 'metric',
  question: 'By your sleep, do you mean how long you sleep, your sleep score or your deep sleep?',
  options: [
    { id: 'sleep_duration', label: 'How long I sleep' },
    { id: 'sleep_score', label: 'My sleep score' },
    { id: 'deep_sleep', label: 'My deep sleep' },
  ],
  likelyOptionId: 'sleep_duration',
  freeText: false,
};

const CHOLESTEROL: ScriptedAmbiguity = {
  about: 'markers',
  question: 'Your lab results have three cholesterol markers. Which one do you mean?',
  options: [
    { id: 'total', label: 'My total cholesterol' },
    { id: 'ldl', label: 'My LDL cholesterol' },
    { id: 'hdl', label: 'My HDL cholesterol' },
  ],
  likelyOptionId: 'total',
  freeText: false,
};

const WINDOW: ScriptedAmbiguity = {
  about: 'window',
  question: 'Over which period should I look?',
  options: [
    // Not a week: seven days are too few for the sample-size gate, so that reading could never be answered.
    { id: 'last_2_weeks', label: 'The last 2 weeks' },
    { id: 'last_30_days', label: 'The last 30 days' },
    { id: 'last_90_days', label: 'The last 90 days' },
  ],
  likelyOptionId: 'last_30_days',
  // "since my holiday", "the last two weeks": a period of the user's own, read as any follow-up is.
  freeText: true,
};

/** Words that already say which measure of sleep is meant. */
const SLEEP_MEASURE_WORDS = ['how much', 'how long', 'how well', 'hours', 'minutes', 'enough', 'quality'];

/** The one question worth asking of the last user message, or null: a metric before a window, never both. */
export function ambiguityOf(messages: readonly ConversationMessage[]): ScriptedAmbiguity | null {
  const { pattern, spec } = understand(messages);
  const onOwnData = pattern === 'my_data' || pattern === 'my_data_judged' || pattern === 'coaching_on_my_data';
  if (!onOwnData || !spec) return null;
  const last = messages.filter((m) => m.role === 'user').at(-1)!;
  const text = normaliseMessage(last.content);
  const phrases = mentionedMetrics(text).map((mention) => mention.phrase);
  if (phrases.length === 1 && phrases[0] === 'sleep' && !hasAny(text, SLEEP_MEASURE_WORDS)) return SLEEP;
  if (phrases.length === 1 && phrases[0] === 'cholesterol') return CHOLESTEROL;
  const overDays = spec.kind === 'description' || spec.kind === 'trend';
  if (overDays && spec.statistic !== 'latest' && VAGUE_WINDOW.test(text)) return WINDOW;
  return null;
}
