/**
 * The CLI's live view without any service: the view model on a recorded turn (a retried step, a
 * rejected finding, a fact-check issue), and both renderers on it. The terminal renderer's output is
 * replayed on a virtual terminal, so what is checked is what a user would see, escape codes applied.
 */
import type { TurnStreamEvent } from '@amy/sdk';
import { findingLine, formatBlock } from '../../cli/src/view/blocks';
import { isRejected, TurnView, type Block, type FindingCheck } from '../../cli/src/view/model';
import { PlainRenderer } from '../../cli/src/view/plain-renderer';
import { COLOUR, PLAIN, terminalStyle, type Style } from '../../cli/src/view/style';
import { formatTail } from '../../cli/src/view/tail';
import { visibleLength } from '../../cli/src/view/text';
import { TtyRenderer } from '../../cli/src/view/tty-renderer';
import { ANSWER, DATA_SCIENCE_TEXT, recordedStream, PLAN_BEFORE_RETRY, TURN_ID } from '../support/cli/recorded-turn';
import { CLEAR_SCREEN, COLOUR_CODE, screenAfter } from '../support/cli/virtual-terminal';

interface Step {
  event: TurnStreamEvent;
  blocks: Block[];
  view: TurnView;
}

/** Feeds the recording through a TurnView, calling `after` once per event with the blocks it finished. */
async function replay(view: TurnView, after: (step: Step) => void = () => {}): Promise<Block[]> {
  const stream = recordedStream();
  const all: Block[] = [];
  for await (const event of stream) {
    const blocks = view.apply(event, stream);
    all.push(...blocks);
    after({ event, blocks, view });
  }
  return all;
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('the view model', () => {
  test('the recording gives its finished blocks in order, each once', async () => {
    const blocks = await replay(new TurnView());
    expect(
      blocks.map((b) => (b.kind === 'agent-started' || b.kind === 'agent-completed' ? `${b.kind}:${b.agent}` : b.kind)),
    ).toEqual([
      'turn-started',
      'agent-started:data_science',
      'step-retry',
      'agent-completed:data_science',
      'validator-started',
      'finding',
      'finding',
      'agent-started:synthesis',
      'agent-completed:synthesis',
      'fact-check',
      'agent-started:memory',
      'agent-completed:memory',
      'completed',
    ]);
  });

  test('a retried step: the new attempt goes on from the failed attempt’s text, which is never shown twice', async () => {
    const liveTexts: string[] = [];
    const blocks = await replay(new TurnView(), ({ event, view }) => {
      const running = view.runningAgents().find((a) => a.agent === 'data_science');
      if (running && (event.type === 'agent.thought' || event.type === 'step.retry')) liveTexts.push(running.text);
    });
    // Live: the failed attempt's text grows, stays at step.retry, and the new attempt's text follows it.
    const retryAt = liveTexts.indexOf(PLAN_BEFORE_RETRY) + 1;
    expect(retryAt).toBeGreaterThan(0);
    expect(liveTexts[retryAt]).toBe(PLAN_BEFORE_RETRY);
    for (const text of liveTexts.slice(retryAt)) {
      expect(text.startsWith(PLAN_BEFORE_RETRY)).toBe(true);
      expect(text.indexOf(PLAN_BEFORE_RETRY, 1)).toBe(-1);
    }
    const done = blocks.find((b) => b.kind === 'agent-completed' && b.agent === 'data_science');
    expect(done).toMatchObject({ text: DATA_SCIENCE_TEXT, durationMs: 8500, costUsd: 0.0412 });
    expect(blocks.find((b) => b.kind === 'step-retry')).toEqual({
      kind: 'step-retry',
      step: 'ds_plan',
      attempt: 2,
      reason: 'previous attempt failed',
    });
  });

  test('findings: a verdict per gate that ran, the Critic’s verdict, and a hard-gate rejection', async () => {
    const findings = (await replay(new TurnView())).flatMap((b) => (b.kind === 'finding' ? [b.finding] : []));
    const [accepted, rejected] = findings;
    expect(accepted).toMatchObject({ findingId: 'ds-001', critic: 'accept' });
    expect(Object.keys(accepted.gates)).toHaveLength(7);
    expect(accepted.gates.subgroup_consistency).toBe('skipped');
    expect(isRejected(accepted)).toBe(false);
    expect(rejected).toEqual({
      findingId: 'ds-002',
      claim: 'resting heart rate falls on rest days',
      gates: { sample_size: 'failed' },
      critic: 'reject',
    });
    expect(isRejected(rejected)).toBe(true);
    expect(isRejected({ ...rejected, critic: 'accept' })).toBe(true);
  });

  test('a verdict the CLI does not know, even one spelled like an inherited property, shows as ?', () => {
    const verdict = 'constructor' as FindingCheck['gates']['sample_size'];
    const line = findingLine({ findingId: 'ds-003', claim: 'c', gates: { sample_size: verdict }, critic: null }, PLAIN);
    expect(line).toMatch(/ \? /);
    expect(line).not.toMatch(/function|object/i);
  });

  test('gates still coming in are live; the Critic’s verdict finishes a finding', async () => {
    const pending: string[][] = [];
    await replay(new TurnView(), ({ event, view }) => {
      if (event.type.startsWith('validator.')) pending.push(view.pendingFindings().map((f) => f.findingId));
    });
    expect(pending).toEqual([...Array(7).fill(['ds-001']), ['ds-001', 'ds-002'], ['ds-002'], []]);
  });

  test('fact_check issues, the result, and nothing left running at the end', async () => {
    const view = new TurnView();
    const blocks = await replay(view);
    expect(blocks.find((b) => b.kind === 'fact-check')).toEqual({ kind: 'fact-check', values: [42] });
    expect(blocks.at(-1)).toMatchObject({ kind: 'completed', turnId: TURN_ID, result: { answer: ANSWER } });
    expect(view.runningAgents()).toEqual([]);
    expect(view.pendingFindings()).toEqual([]);
    expect(view.ended).toBe('completed');
  });

  test('a running agent is timed from its agent.started', async () => {
    const starts: number[] = [];
    await replay(new TurnView(), ({ event, view }) => {
      if (event.type === 'agent.started') starts.push(view.runningAgents().at(-1)!.startedAt);
    });
    expect(starts[0]).toBe(Date.parse('2026-11-23T10:00:01.000Z'));
  });
});

/** Every output a renderer wrote, as one string. */
function capture(columns = 100, rows = 40) {
  const out = { text: '', columns, rows, write: (chunk: string) => (out.text += chunk) };
  return out;
}

/** The recording through a TtyRenderer, 250 ms per event and a tick after each, on a fake clock. */
async function renderLive(style: Style, inspect: (screen: string[], event: TurnStreamEvent) => void = () => {}) {
  const out = capture();
  const view = new TurnView();
  let now = Date.parse('2026-11-23T10:00:00.000Z');
  const renderer = new TtyRenderer(out, view, () => now, style);
  await replay(view, ({ event, blocks }) => {
    now += 250;
    renderer.show(blocks);
    renderer.tick();
    inspect(screenAfter(out.text), event);
  });
  renderer.close();
  return out.text;
}

async function renderPlain(): Promise<string> {
  const out = capture();
  const renderer = new PlainRenderer(out);
  await replay(new TurnView(), ({ blocks }) => renderer.show(blocks));
  return out.text;
}

describe('plain output (stdout not a terminal)', () => {
  test('no escape sequence at all, and every finished block exactly once', async () => {
    const text = await renderPlain();
    expect(text).not.toContain('\x1b');
    expect(count(text, ANSWER)).toBe(1);
    for (const line of [
      '● turn_01JCLIVIEW0000000000000000 started',
      '▸ data_science Compute the average resting heart rate over the last 90 days',
      '↻ ds_plan runs again (attempt 2): previous attempt failed',
      '✓ data_science 8.5 s · $0.0412',
      '  ds-001  · ✓ ✓ ✓ ✓ – ✓ ✓  critic accept  average resting heart rate over the last 90 days',
      '  ds-002 rejected  · ✗ · · · · · ·  critic reject  resting heart rate falls on rest days',
      '⚠ fact check: 42 in the answer was not traced to the fact sheet',
      '✓ memory 900 ms · $0.0009 +1 entries (1 insight)',
      'Answer',
      'Fact sheet',
      'Agents data_science',
      'Validator 1 validated, 0 conditional, 1 rejected of 2',
    ]) {
      expect(text.split('\n').filter((l) => l === line)).toHaveLength(1);
    }
    expect(text.split(PLAN_BEFORE_RETRY)).toHaveLength(2);
  });

  test('the fact sheet has claim, value, unit, n and window; cost and duration close the result', async () => {
    const lines = (await renderPlain()).split('\n');
    const header = lines.findIndex((l) => l === 'Fact sheet');
    expect(lines[header + 1].split(/\s+/).filter(Boolean)).toEqual(['claim', 'value', 'unit', 'n', 'window']);
    expect(lines[header + 2].split(/\s{2,}/).filter(Boolean)).toEqual([
      'ds-001.mean',
      '58.2',
      'bpm',
      '88',
      'last 90 days',
    ]);
    expect(lines).toContain('Cost $0.0542 · 16.0 s · turn_01JCLIVIEW0000000000000000');
  });
});

test('the coach’s personal anchors are a table of their own after the fact sheet, not rows of it', () => {
  const text = formatBlock(
    {
      kind: 'completed',
      turnId: TURN_ID,
      fromSnapshot: false,
      result: {
        answer: 'Your average nightly sleep was 463.5 min.',
        fact_sheet: [
          { claim: 'ds-001.sd', value: 42.05, unit: 'min', source: 'data_science', n: 29, window: 'the last 30 days' },
        ],
        personal_anchors: [
          {
            claim: 'anchor.sleep_minutes_mean_14d',
            label: 'average nightly sleep',
            value: 463.5,
            unit: 'min',
            n: 13,
            window: '14 days to 2026-12-06',
          },
        ],
        agents_used: ['data_science', 'health_coach'],
        validator: { findings_total: 1, findings_validated: 1, findings_conditional: 0, findings_rejected: 0 },
        cost_usd: 0.03,
        duration_ms: 9000,
      },
    },
    PLAIN,
  );
  const lines = text.split('\n');
  const sheet = lines.indexOf('Fact sheet');
  const anchors = lines.indexOf('Personal anchors (from your own data)');
  expect(sheet).toBeGreaterThan(-1);
  expect(anchors).toBeGreaterThan(sheet);
  expect(lines.slice(sheet, anchors).join('\n')).not.toContain('anchor.');
  expect(lines[anchors + 2].split(/\s{2,}/).filter(Boolean)).toEqual([
    'anchor.sleep_minutes_mean_14d',
    '463.5',
    'min',
    '13',
    '14 days to 2026-12-06',
  ]);
});

describe('the live view on a terminal', () => {
  test('never clears the screen; once the turn ends the screen holds exactly the plain output', async () => {
    const output = await renderLive(PLAIN);
    expect(output).not.toMatch(CLEAR_SCREEN);
    expect(output).toContain('\x1b[1A\x1b[2K'); // the tail was redrawn in place
    expect(screenAfter(output).join('\n').trimEnd()).toBe((await renderPlain()).trimEnd());
  });

  test('while an agent works: a spinner, its timer and the last rows of its text, a retried step’s continued', async () => {
    const seen: string[][] = [];
    await renderLive(PLAIN, (screen, event) => {
      if (event.type === 'agent.thought' && event.agent === 'data_science' && event.attempt === 2) seen.push(screen);
    });
    const last = seen.at(-1)!;
    const header = last.findIndex((row) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] data_science \d+s$/.test(row));
    expect(header).toBeGreaterThan(0);
    const textRows = last.slice(header + 1).filter((row) => row !== '');
    expect(textRows.length).toBeGreaterThanOrEqual(1);
    for (const row of textRows) expect(row).toMatch(/^ {4}\S/);
    expect(DATA_SCIENCE_TEXT).toContain(textRows.at(-1)!.trim());
    for (const screen of seen)
      expect(screen.join('\n').split(PLAN_BEFORE_RETRY.slice(-20)).length).toBeLessThanOrEqual(2);
  });

  test('the timer counts from the agent’s start', () => {
    const live = {
      runningAgents: () => [{ agent: 'data_science' as const, question: 'q', startedAt: 1_000, text: '' }],
      pendingFindings: () => [],
    };
    expect(formatTail(live, 4_400, { width: 80, height: 24 }, PLAIN)[0]).toMatch(/data_science 3s$/);
    expect(formatTail(live, 126_000, { width: 80, height: 24 }, PLAIN)[0]).toMatch(/data_science 2m 05s$/);
  });

  test('every live row fits the width (so cursor-up erases exactly what was drawn), within the height', () => {
    const live = {
      runningAgents: () => [
        { agent: 'domain_expert' as const, question: 'q', startedAt: 0, text: 'word '.repeat(200) },
        { agent: 'health_coach' as const, question: 'q', startedAt: 0, text: 'line\n'.repeat(50) },
      ],
      pendingFindings: () => [{ findingId: 'ds-001', claim: 'claim '.repeat(30), gates: {}, critic: null }],
    };
    const rows = formatTail(live, 5_000, { width: 40, height: 6 }, COLOUR);
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(visibleLength(row)).toBeLessThanOrEqual(39);
  });

  test('colour on a terminal; NO_COLOR gives the same screen without a single colour code', async () => {
    const coloured = await renderLive(terminalStyle({}));
    const noColour = await renderLive(terminalStyle({ NO_COLOR: '1' }));
    expect(coloured).toMatch(COLOUR_CODE);
    expect(noColour).not.toMatch(COLOUR_CODE);
    expect(screenAfter(noColour)).toEqual(screenAfter(coloured));
  });
});
