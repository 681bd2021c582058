/**
 * `@amy/sdk` as a package: what `npm install` builds is what a consumer gets. The bundle imports
 * nothing (no Node built-in, no dependency), and its one declaration file type-checks in a consumer
 * on NodeNext and on bundler resolution, where extensionless relative imports would not resolve.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureSdkBuilt, REPO_ROOT } from '../support/workspace-build';

let bundle: string;
beforeAll(() => {
  bundle = fs.readFileSync(ensureSdkBuilt(), 'utf8');
}, 120_000);

test('the bundle imports nothing: it runs as it is in Node, browsers, Deno and Bun', () => {
  expect(bundle).not.toMatch(/^\s*import\s/m);
  expect(bundle).not.toMatch(/\brequire\(|from\s+['"]node:/);
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'sdk/package.json'), 'utf8'));
  expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
});

const CONSUMER = `
import { Amy, TurnFailedError, type TurnStreamEvent } from '@amy/sdk';
const amy = new Amy({ apiKey: 'k' });
const turn = await amy.turns.create({ messages: [{ role: 'user', content: 'hi' }] });
for await (const event of amy.turns.stream(turn.id, { lastEventId: turn.last_event_id })) {
  if (event.type === 'agent.thought') { const delta: string = event.delta; void delta; }
  if (event.type === 'turn.completed') { const answer: string = event.result.answer; void answer; }
  if (event.type === 'unknown') { const name: string = event.event; void name; }
}
const none: TurnStreamEvent | null = null; void none; void TurnFailedError;
const page = await amy.memory.list({ category: 'goal' });
const text: string = page.data[0].text; void text;
const days = await amy.data.daily.list({ from: '2026-01-01', limit: 500 });
const steps: number | null = days.data[0].steps; void steps;
await amy.data.workouts.upsert([{ external_id: 'w1', date: '2026-01-02', type: 'yoga', duration_minutes: 30 }]);
// @ts-expect-error a workout type the API refuses is a type error
await amy.data.workouts.upsert([{ external_id: 'w2', date: '2026-01-02', type: 'curling', duration_minutes: 30 }]);
await amy.data.labs.upsert([{ date: '2026-01-02', biomarker: 'ldl_cholesterol', value: 3.36, unit: 'mmol/L' }]);
await amy.data.labs.upsert({ resourceType: 'Bundle', type: 'collection', entry: [] });
const labs = await amy.data.labs.list({ biomarker: 'hba1c' });
const loinc: string = labs.data[0].loinc; void loinc;
// @ts-expect-error a biomarker the API does not know is a type error
await amy.data.labs.upsert([{ date: '2026-01-02', biomarker: 'cortisol', value: 10, unit: 'ug/dL' }]);
// @ts-expect-error a role the API refuses is a type error
await amy.turns.create({ messages: [{ role: 'robot', content: 'hi' }] });
`;

test.each([
  ['NodeNext', 'NodeNext'],
  ['Bundler', 'ESNext'],
])(
  'a consumer with %s resolution type-checks against the published declarations',
  (resolution, module) => {
    // Inside node_modules, so '@amy/sdk' resolves as it would for a dependent project.
    const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'node_modules', '.amy-consumer-'));
    try {
      fs.writeFileSync(path.join(dir, 'consumer.mts'), CONSUMER);
      const compilerOptions = { target: 'ES2022', module, moduleResolution: resolution, strict: true, noEmit: true };
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { ...compilerOptions, lib: ['ES2022', 'DOM'], types: [] },
          files: ['consumer.mts'],
        }),
      );
      const tsc = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
      const checked = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
      expect(checked.stdout + checked.stderr).toBe('');
      expect(checked.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
  60_000,
);
