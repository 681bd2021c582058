/**
 * The repository stands alone: no file points outside it for its design or cites documents a clone
 * does not have (the original product contract, its numbered spec pages). What a comment means is said
 * in place or in docs/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

const OUTSIDE = [
  { what: 'a path out of the repository', pattern: new RegExp(['\\.\\.', 'shared\\b'].join('/')) },
  { what: 'a numbered spec page', pattern: new RegExp(['\\bseeds?', '0\\d\\d'].join('[/ _]'), 'i') },
  { what: "the spec's own name for itself", pattern: new RegExp(["\\bthe seed('s)?", '\\b'].join(''), 'i') },
];

/** This file, whose examples of what is refused would match. */
const SELF = path.relative(root, __filename);

const trackedTextFiles = () =>
  execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file && !/\.(png|jpe?g|gif|ico|woff2?|patch)$/.test(file) && file !== 'package-lock.json')
    .filter((file) => file !== SELF && fs.existsSync(path.join(root, file)));

test('no tracked file refers to documents outside the repository', () => {
  const found: string[] = [];
  for (const file of trackedTextFiles()) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const { what, pattern } of OUTSIDE)
        if (pattern.test(line)) found.push(`${file}:${i + 1} (${what}): ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});

test('the patterns catch what they are for', () => {
  const caught = (line: string) => OUTSIDE.filter(({ pattern }) => pattern.test(line)).map(({ what }) => what);
  expect(caught(`see ${['..', 'shared', 'ARCHITECTURE.md'].join('/')}`)).toEqual(['a path out of the repository']);
  expect(caught('as seed 002 says')).toEqual(['a numbered spec page']);
  expect(caught('seeds/001_e7d0.txt')).toEqual(['a numbered spec page']);
  expect(caught("the seed's seven gates")).toEqual(["the spec's own name for itself"]);
  expect(caught('a random seed of 42, seeds 11 and 23')).toEqual([]);
});

/** An issue named by its number (the word, then its number) means nothing to a reader without the tracker. */
const ISSUE_NUMBER = /\bissues? #?\d+/i;

test('no tracked file names an issue by its number: each says the thing itself', () => {
  const found: string[] = [];
  for (const file of trackedTextFiles()) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (ISSUE_NUMBER.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});

test('the issue-number pattern catches what it is for', () => {
  // Built from parts, so that a search of the repository for issue numbers does not find this test's examples.
  const named = [`as ${'issue'} 27 says`, `${'Issue'} #4`, `(${'issues'} 12 and 13)`];
  const unnamed = ['every transaction that issues `NOTIFY`', 'since the issue was filed', `${'tissue'} 5 g`];
  expect([...named, ...unnamed].filter((line) => ISSUE_NUMBER.test(line))).toEqual(named);
});

/**
 * docs/design.md says what the service does and why, in its own words: it neither names the pages of the
 * product's first description nor the platform that description was written for, and its text does not
 * compare itself with "the contract". Headings are left out of the last rule: they are kept stable for the
 * links to them, the one that gathers the decisions a client would trip over included.
 */
const DESIGN_REFERENCES = [
  {
    what: 'a page of the first description by its name',
    pattern: /\b(orchestration internals|turns overview|memory page)\b/i,
  },
  { what: 'the platform the first description was written for', pattern: /\b(Cloudflare|D1|KV)\b/ },
  { what: 'a comparison with the contract', pattern: /\bthe (original )?(product )?contract\b/i, bodyOnly: true },
];

const designReferences = (line: string) =>
  DESIGN_REFERENCES.filter(({ pattern, bodyOnly }) => pattern.test(line) && !(bodyOnly && /^#/.test(line)));

test('docs/design.md states its decisions without describing itself against documents a clone lacks', () => {
  const lines = fs.readFileSync(path.join(root, 'docs', 'design.md'), 'utf8').split('\n');
  const found = lines.flatMap((line, i) =>
    designReferences(line).map(({ what }) => `${i + 1} (${what}): ${line.trim()}`),
  );
  expect(found).toEqual([]);
});

test('the design patterns catch what they are for', () => {
  const caught = (line: string) => designReferences(line).map(({ what }) => what);
  expect(caught('as the orchestration internals say')).toEqual(['a page of the first description by its name']);
  expect(caught('its D1 tables are Postgres tables')).toEqual(['the platform the first description was written for']);
  expect(caught("where the contract's check only flags")).toEqual(['a comparison with the contract']);
  expect(caught('## Where this service differs from or goes beyond the original product contract')).toEqual([]);
  expect(caught("the tools' contract is `tool-contract.ts`; `contracts/steps.ts` lists the steps")).toEqual([]);
});
