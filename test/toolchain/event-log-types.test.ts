/**
 * An event's `data` is typed by its `type` (platform/event-log.ts `NewTurnEvent`, from the schemas of
 * contracts/event-data.ts): a misspelt field, a value of the wrong type, a missing field or another event's
 * data does not compile. Reads are typed too (contracts/event-data.ts `TurnEvent`): narrowed on `type`, a
 * field has its declared type and a misspelt one does not compile; un-narrowed, a field is `unknown`. The
 * probes below are `@ts-expect-error` lines, so the repository's type check fails if the typing loosens (an
 * expected error that no longer occurs is itself an error); the test runs that check on this file alone, so
 * the unit tier catches it too.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TurnEvent } from '../../contracts/event-data';
import type { NewTurnEvent } from '../../platform/event-log';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

export const probes: NewTurnEvent[] = [
  { type: 'agent.thought', data: { agent: 'synthesis', delta: 'Hi', attempt: 1, step: 'synthesis' } },
  { type: 'fact_check', data: { issues: [] }, dedupeKey: 'fact_check' },
  // @ts-expect-error a misspelt field
  { type: 'agent.thought', data: { agent: 'synthesis', detla: 'Hi', attempt: 1, step: 'synthesis' } },
  // @ts-expect-error a value of the wrong type
  { type: 'agent.thought', data: { agent: 'synthesis', delta: 'Hi', attempt: '1', step: 'synthesis' } },
  // @ts-expect-error an agent the stream does not have
  { type: 'agent.started', data: { agent: 'oracle', at: '2026-11-26T00:00:00Z', question: 'Why?' } },
  // @ts-expect-error a field the event requires is missing
  { type: 'step.retry', data: { step: 'synthesis', attempt: 2, at: '2026-11-26T00:00:00Z' } },
  // @ts-expect-error another event's data
  { type: 'turn.started', data: { agent: 'synthesis', delta: 'Hi', attempt: 1, step: 'synthesis' } },
];

export function readProbes(event: TurnEvent): unknown[] {
  const read: unknown[] = [];
  if (event.type === 'agent.thought') {
    const delta: string = event.data.delta;
    const attempt: number = event.data.attempt;
    read.push(delta, attempt);
    // @ts-expect-error a misspelt field
    read.push(event.data.detla);
    // @ts-expect-error a field read as another type than its own
    const step: number = event.data.step;
    read.push(step);
  }
  const at: unknown = event.data.at;
  // @ts-expect-error without narrowing on `type`, a field is unknown
  const turnId: string = event.data.turn_id;
  // @ts-expect-error a field no event has, even without narrowing
  read.push(at, turnId, event.data.tunr_id);
  return read;
}

test('the probes type-check as written: each expected error occurs', () => {
  const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'node_modules', '.amy-event-types-'));
  try {
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: path.join(REPO_ROOT, 'tsconfig.json'),
        // Only this file's diagnostics count: unused names elsewhere are the repository check's business.
        compilerOptions: { noUnusedLocals: false, noUnusedParameters: false },
        include: [],
        files: [__filename],
      }),
    );
    const tsc = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
    const checked = spawnSync(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
    const here = path.relative(REPO_ROOT, __filename);
    const diagnostics = (checked.stdout + checked.stderr).split('\n').filter((line) => line.includes(here));
    expect(diagnostics).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
