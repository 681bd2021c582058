/**
 * Running the question set and the adversarial cases against a stack: each user's questions one after
 * another (later turns may read what earlier ones left in memory, as in real use), users side by side,
 * so at most one turn per user and a few in all are in flight. A turn that errs or ends failed is a
 * result, recorded with the rest; only the service not being reachable at all stops the eval.
 */
import type { Pool } from 'pg';
import { askTurn, rememberForUser } from './client';
import type { EvalQuestion } from './questions';
import { readDailyCalendar, type DailyCalendar } from './recompute';
import { checkTurn, type TurnCheck } from './turn-check';
import type { EvalUser } from './users';

type CaseName = 'main' | 'state a number' | 'false memory' | 'imported data' | 'wrong number';

export interface TurnRecord {
  case: CaseName;
  user: string;
  question: EvalQuestion;
  /** Routing is scored for the question set and the adversarial questions that name a pattern. */
  scoreRouting: boolean;
  check: TurnCheck | null;
  error: string | null;
}

export interface Session {
  case: CaseName;
  user: EvalUser;
  questions: EvalQuestion[];
  scoreRouting?: boolean;
  /** Memory written through the API before the first question. */
  memory?: string;
}

const say = (msg: string) => console.log(`[eval] ${msg}`);

async function runSession(apiUrl: string, pool: Pool, session: Session): Promise<TurnRecord[]> {
  const calendar: DailyCalendar = await readDailyCalendar(pool, session.user.userId);
  if (session.memory) await rememberForUser(apiUrl, session.user, { text: session.memory, category: 'insight' });
  const records: TurnRecord[] = [];
  for (const question of session.questions) {
    const base = {
      case: session.case,
      user: session.user.label,
      question,
      scoreRouting: session.scoreRouting ?? true,
    };
    try {
      const asked = await askTurn(apiUrl, pool, session.user, question.text);
      const check = checkTurn({ ...question, scoreRouting: base.scoreRouting }, asked, calendar);
      records.push({ ...base, check, error: null });
      say(
        `${session.user.label} · ${check.status} ${check.turnId} (${(asked.wallMs / 1000).toFixed(1)} s) ${question.text}`,
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      records.push({ ...base, check: null, error: message });
      say(`${session.user.label} · ERROR ${question.text}: ${message}`);
    }
  }
  return records;
}

/** Every session's turns, the sessions side by side. */
export async function runSessions(apiUrl: string, pool: Pool, sessions: Session[]): Promise<TurnRecord[]> {
  const results = await Promise.all(sessions.map((s) => runSession(apiUrl, pool, s)));
  return results.flat();
}
