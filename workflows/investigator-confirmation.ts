/**
 * The Investigator's scan is the most expensive shape of turn (docs/design.md#step-1a-the-investigator): a turn that may
 * ask for a confirmation (its request's `interaction`) asks before it starts one. Declining, or no answer by the
 * deadline, takes the cheaper path: the question is routed as any other.
 */
import type { InputDesk, QuestionDraft } from './ask-user';

const SCAN_QUESTION: QuestionDraft = {
  kind: 'confirmation',
  question:
    'Your question is open-ended, so I would look through all of your data for what stands out. ' +
    'That takes longer and costs more than a direct answer. Go ahead?',
  options: [
    { id: 'scan', label: 'Yes, look through all my data' },
    { id: 'quick', label: 'No, a quick answer is enough' },
  ],
  freeText: false,
  defaultOptionId: 'quick',
  estimate: 'investigator_scan',
};

/** Whether the Investigator may scan: yes when the turn cannot ask, else as the user (or the deadline) says. */
export async function scanConfirmed(desk: InputDesk): Promise<boolean> {
  if (!desk.accepts('confirmation')) return true;
  const received = await desk.ask(SCAN_QUESTION);
  return received.option_id === 'scan';
}
