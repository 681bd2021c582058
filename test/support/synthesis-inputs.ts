import type { SynthesisPromptInputs } from '../../activities/steps/synthesis/prompt';

/**
 * The synthesis step's inputs for a turn whose main agent wrote nothing and found nothing: what a test of the
 * stream around a synthesis call needs, and no more.
 */
export const emptySynthesisInputs = (userMessage: string, mainAgent: SynthesisPromptInputs['mainAgent']) => ({
  userMessage,
  mainAgent,
  mainAgentDraft: '',
  supportingInsights: '',
  findings: [],
  factSheet: [],
  personalAnchors: [],
  dataScienceFailed: false,
});
