/**
 * Asking what an ambiguous question means (docs/api.md#asking-back): in a turn whose request accepts clarification
 * questions, the `clarify` step says whether the question reads in ways that give different answers, and with which
 * options. The turn asks, and the rest of it reads the conversation with the exchange appended, Amy's question then
 * the user's reply (the option's label, or their own words), as any follow-up in a conversation is read. At the
 * deadline it goes on with the most likely reading as if it had been chosen, and synthesis is told that nobody chose
 * it, so the answer says what it assumed.
 */
import type { Message } from '../contracts/turn';
import type { InputReceived } from '../contracts/interaction';
import type { Clarification } from '../activities/steps/clarify';
import type { SynthesisClarification } from '../activities/steps/synthesis/prompt';
import type { InputDesk } from './ask-user';

export interface ClarifiedConversation {
  /** The conversation the rest of the turn reads. */
  messages: Message[];
  /** What synthesis is told of the exchange: its answer may need to say that it assumed a reading. */
  clarification?: SynthesisClarification;
}

/** Asks when the `clarify` step found the question ambiguous; otherwise the conversation is the turn's own. */
export async function askWhatItMeans(
  desk: InputDesk,
  messages: Message[],
  clarification: Clarification | null,
): Promise<ClarifiedConversation> {
  if (!clarification?.ambiguous) return { messages };
  const received = await desk.ask({
    kind: 'clarification',
    question: clarification.question,
    options: clarification.options,
    freeText: clarification.freeText,
    defaultOptionId: clarification.likelyOptionId,
  });
  const answer = replyOf(received, clarification);
  return {
    messages: [...messages, { role: 'assistant', content: clarification.question }, { role: 'user', content: answer }],
    clarification: { question: clarification.question, answer, assumed: received.source === 'expiry' },
  };
}

function replyOf(received: InputReceived, clarification: Extract<Clarification, { ambiguous: true }>): string {
  if (received.text !== null) return received.text;
  const chosen = clarification.options.find((option) => option.id === received.option_id);
  // The validator only lets through the question's own options; the likely one is what expiry goes on with.
  return (chosen ?? clarification.options.find((option) => option.id === clarification.likelyOptionId)!).label;
}
