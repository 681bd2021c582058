/** The phrasing corpus (test/fixtures/phrasing-corpus.json), as the language tests read it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConversationMessage } from '../../../dev/scripted-model/language/understand-question';
import type { DataSpec, RoutingPattern } from '../../../dev/scripted-model/language/understanding';

export interface CorpusEntry {
  id: string;
  question: string;
  /** The conversation before the question, for a follow-up. */
  history?: ConversationMessage[];
  pattern: RoutingPattern;
  spec: DataSpec | null;
  /** For `unavailable`: the everyday names of the metrics the data does not hold. */
  missing?: string[];
  note?: string;
}

export const phrasingCorpus = JSON.parse(
  readFileSync(path.join(__dirname, '../../fixtures/phrasing-corpus.json'), 'utf8'),
) as CorpusEntry[];
