import { clarifyingReply, unavailableReply } from '../language/replies';
import { understand } from '../language/understand-question';
import type { ScriptedRule } from '../types';
import { userQuestion } from './user-question';

/**
 * The conversational reply when routing picks no specialist. It never contains a digit: nothing
 * here went through the Fact Sheet, so a number in it would be an invented one.
 */

const REPLIES: Array<{ when: RegExp; replies: string[] }> = [
  {
    when: /\b(thanks|thank you|thx|cheers|appreciate)\b/,
    replies: [
      "You're welcome! Let me know whenever you want to look at your sleep, activity or heart data.",
      'Happy to help! Ask me anything about your health data whenever you like.',
      "Anytime! I'm here if you want to dig into your trends or set a new goal.",
    ],
  },
  {
    when: /\b(sync|pair|bluetooth|battery|charg(e|ing)|firmware|watch|ring|tracker|device|app)\b/,
    replies: [
      "I can't troubleshoot devices directly, but restarting the app and re-pairing the device usually gets data flowing again. Once it syncs, I'm happy to look at your data.",
      "Device issues are best handled in your tracker's app settings or its support pages. When your data is syncing again, ask me anything about it.",
    ],
  },
  {
    when: /\b(bye|goodbye|see you|good night)\b/,
    replies: ['Take care! Come back anytime.', 'Talk soon, and rest well!'],
  },
  {
    when: /\b(hi|hello|hey|good (morning|afternoon|evening)|how are you)\b/,
    replies: [
      "Hi! I'm Amy. I can help you understand your sleep, activity and heart data, or plan a goal.",
      "Hello! Ask me about your health data, a health topic, or a habit you'd like to build.",
      'Hey there! What would you like to look at today: sleep, activity, or something else?',
    ],
  },
];

const GENERAL_REPLIES = [
  "I'm best at questions about your health data, health topics and wellness goals. What would you like to explore?",
  "I'm not sure I can help with that one, but I'd be glad to look at your sleep, activity or heart data with you.",
];

/** FNV-1a: a stable choice among the variants for the same input, different across inputs. */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export const fallbackReply: ScriptedRule<'fallback_reply'> = {
  step: 'fallback_reply',
  respond(req) {
    const question = userQuestion(req.inputs.messages).toLowerCase();
    // The graceful edges: a metric the data does not hold is named, an unreadable ask gets examples.
    const understood = understand(req.inputs.messages);
    if (understood.pattern === 'unavailable') return { text: unavailableReply(understood.missing) };
    const replies = REPLIES.find(({ when }) => when.test(question))?.replies;
    if (!replies && understood.pattern === 'unclear') return { text: clarifyingReply() };
    const choices = replies ?? GENERAL_REPLIES;
    return { text: choices[hashText(question) % choices.length] };
  },
};
