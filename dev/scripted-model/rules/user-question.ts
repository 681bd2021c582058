import type { Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';

const XML_TAG = /<\/?[A-Za-z_][\w-]*>/g;

/** Text as the rules match it: markup tags dropped, whitespace collapsed. */
export const plainText = (text: string): string => text.replace(XML_TAG, ' ').replace(/\s+/g, ' ').trim();

/** The user's own words: the conversation's last user message, as plain text. */
export const userQuestion = (messages: Message[]): string => plainText(lastUserMessage(messages));
