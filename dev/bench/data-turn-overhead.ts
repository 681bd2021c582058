/**
 * (f) A full pattern-2 turn, a question about the user's own data, against the bare-Temporal floor: the
 * same comparison as (a) (dev/bench/turn-overhead.ts), with the Data Science agent, the sandbox run, the
 * gates, the Critic, the Assessment, synthesis and memory in the turn, and as many no-op activities in
 * the bare workflow as the turn's history records. The user needs health data (seedDemoHealthData).
 */
import type { TurnResult } from '../../contracts/turn';
import { measureTurnAgainstBare, type TurnOverheadOptions, type TurnOverheadResult } from './turn-overhead';

export const DATA_QUESTION = 'What is my average resting heart rate over the last 90 days?';

/**
 * A turn whose analysis failed, or whose finding the gates rejected, takes a shorter path: it would be
 * measured as a data turn without being one. Also used by (g).
 */
export function checkDataTurn({ agents_used, validator }: TurnResult): void {
  if (agents_used.join() !== 'data_science' || validator.findings_total !== 1 || validator.findings_rejected) {
    throw new Error(
      `the data turn ran ${agents_used.join(', ') || 'no agent'} with validator ${JSON.stringify(validator)}`,
    );
  }
}

export function measureDataTurnOverhead(opts: TurnOverheadOptions): Promise<TurnOverheadResult> {
  return measureTurnAgainstBare({ ...opts, question: DATA_QUESTION, checkResult: checkDataTurn });
}
