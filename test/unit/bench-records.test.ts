/**
 * `npm run bench`'s markdown (dev/bench/report.ts) on a small fixture: the run's record, a file of its own
 * under docs/benchmarks/bench/ whose link back to the method resolves, and the part of docs/benchmarks.md a
 * run rewrites (its table and a link to each record, newest first); and every record kept under
 * docs/benchmarks/ links back to a heading the page has. Nothing here runs a measurement or writes a file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderDocSection, renderRunRecord, type MachineInfo, type Section } from '../../dev/bench/report';

const docsDir = path.resolve(__dirname, '..', '..', 'docs');

const machine: MachineInfo = {
  cpu: 'AMD EPYC',
  cores: 2,
  memoryGb: 23.5,
  node: 'v20.20.2',
  postgres: 'PostgreSQL 17.6, local, fsync off',
  temporal: 'server 1.32.0, dev server, in memory',
  load: [2.09, 1.79, 1.6],
  date: '2026-11-27T13:31:56Z',
};

const sections: Section[] = [
  {
    rows: [
      { measurement: '(a) Turn overhead: ratio of medians', result: '1.50×', target: '≤ 1.5×', met: true },
      {
        measurement: '(g) Knowledge turn CPU against the bare floor: ratio',
        result: '2.06×',
        target: '≤ 1.3×',
        met: false,
      },
    ],
    details: ['(a) Steps per run, counted from the recorded histories.'],
  },
];

test("a run's record: its title, a link to the method that resolves, the machine, the table and the details", () => {
  const record = renderRunRecord(machine, sections, 114);
  const lines = record.split('\n');
  expect(lines[0]).toBe('# Benchmarks (npm run bench): run of 2026-11-27T13:31:56Z');
  const method = /\]\(\.\.\/\.\.\/(benchmarks\.md)#benchmarks\)/.exec(record);
  expect(method).not.toBeNull();
  expect(fs.readFileSync(path.join(docsDir, method![1]), 'utf8').startsWith('# Benchmarks\n')).toBe(true);
  expect(record).toMatch(/\| Load average +\| 2\.09, 1\.79, 1\.60 \(1, 5, 15 min, as the run ended\) +\|/);
  expect(record).toMatch(
    /\| \(g\) Knowledge turn CPU against the bare floor: ratio +\| 2\.06× +\| ≤ 1\.3× +\| \*\*NO\*\* +\|/,
  );
  expect(record).toContain('- (a) Steps per run, counted from the recorded histories.\n- The whole run took 114 s.\n');
});

test('the docs section: the latest table and a link to each record, newest first', () => {
  const records = ['2026-11-27T13-31-56Z.md', '2026-11-22T10-00-00Z.md'];
  const section = renderDocSection(machine, sections, records);
  expect(section).toContain(
    "Latest run: 2026-11-27T13:31:56Z ([2026-11-27T13-31-56Z](benchmarks/bench/2026-11-27T13-31-56Z.md): the machine and every measurement's details).",
  );
  expect(section).toMatch(/\| \(a\) Turn overhead: ratio of medians +\| 1\.50× +\| ≤ 1\.5× +\| yes +\|/);
  expect(section).not.toContain('Load average');
  expect(section).toContain(
    "Every run's record: [2026-11-27T13-31-56Z](benchmarks/bench/2026-11-27T13-31-56Z.md), " +
      '[2026-11-22T10-00-00Z](benchmarks/bench/2026-11-22T10-00-00Z.md).',
  );
});

/** GitHub's heading id: lowercased, all but letters, digits, `_`, `-` and spaces dropped, spaces as `-`. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

test("every record's link back to the page names one of its headings", () => {
  const headings = new Set(
    fs
      .readFileSync(path.join(docsDir, 'benchmarks.md'), 'utf8')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => anchor(line.replace(/^#+ /, ''))),
  );
  const recordsDir = path.join(docsDir, 'benchmarks');
  const links = fs
    .readdirSync(recordsDir)
    .flatMap((bench) => fs.readdirSync(path.join(recordsDir, bench)).map((file) => path.join(recordsDir, bench, file)))
    .flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/\]\(\.\.\/\.\.\/benchmarks\.md#([^)]+)\)/g)].map(([, id]) => ({
        file: path.relative(docsDir, file),
        id,
      })),
    );
  expect(links.length).toBeGreaterThan(0);
  expect(links.filter(({ id }) => !headings.has(id))).toEqual([]);
});
