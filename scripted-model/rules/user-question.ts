import type { ScriptedRequest } from '../types';

const USER_MESSAGE_MARKER = /^[ \t]*User message:[ \t]*/im;
const XML_TAG = /<\/?[A-Za-z_][\w-]*>/g;

/**
 * The user's own words inside a step prompt. Prompts wrap the message in instructions and tags, so
 * when the last user message has a `User message:` line the question is whatever follows it;
 * otherwise the whole last user message is the question.
 */
export function userQuestion(req: ScriptedRequest): string {
  const text = req.lastUserText;
  const marker = USER_MESSAGE_MARKER.exec(text);
  const question = marker ? text.slice(marker.index + marker[0].length) : text;
  return question.replace(XML_TAG, ' ').replace(/\s+/g, ' ').trim();
}
