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
