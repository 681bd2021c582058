/**
 * The documentation holds together: README.md and every page of docs/ link only to files that exist
 * and to headings those files have, the repository stands on its own (nothing points outside it), and
 * the README stays a front page short enough to read in a few minutes.
 *
 * Anchors follow GitHub's rule for heading ids: the heading's text, lowercased, with every character
 * that is not a letter, a digit, `_`, `-` or a space dropped, and spaces turned into `-`; a heading
 * whose id is already taken gets `-1`, `-2`, ….
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const README_MAX_LINES = 320;

const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const read = (page: string) => fs.readFileSync(path.join(ROOT, page), 'utf8');

/** The page's lines outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
function proseLines(markdown: string): Array<{ line: string; number: number }> {
  const lines: Array<{ line: string; number: number }> = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push({ line, number: i + 1 });
  });
  return lines;
}

/** GitHub's id for a heading's text. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or an image: its text
    .replace(/`([^`]*)`/g, '$1') // inline code: its content
    .replace(/<[^>]+>/g, ''); // inline HTML
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the page's headings produce. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const { line } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

/** The relative links and images of a page's prose (inline code spans and code blocks left out). */
function relativeLinks(page: string, markdown: string): Link[] {
  return proseLines(markdown).flatMap(({ line, number }) => {
    const prose = line.replace(/`+[^`]*`+/g, '');
    return [...prose.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map((m) => m[1])
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)) // http:, https:, mailto: …
      .map((target) => ({ page, line: number, target }));
  });
}

/** Why a link does not resolve, or null when it does. */
function brokenReason(link: Link): string | null {
  const [file, fragment] = link.target.split('#', 2) as [string, string | undefined];
  const targetPage =
    file === '' ? link.page : path.posix.normalize(path.posix.join(path.posix.dirname(link.page), file));
  if (targetPage.startsWith('..')) return 'points outside the repository';
  const full = path.join(ROOT, targetPage);
  if (!fs.existsSync(full)) return `no file ${targetPage}`;
  if (fragment === undefined) return null;
  if (!targetPage.endsWith('.md')) return `#${fragment} on a file that is not Markdown`;
  if (!anchors(fs.readFileSync(full, 'utf8')).has(decodeURIComponent(fragment))) {
    return `no heading of ${targetPage} has the id #${fragment}`;
  }
  return null;
}

test('the documentation has its pages', () => {
  expect(PAGES).toEqual(
    expect.arrayContaining([
      'README.md',
      'docs/design.md',
      'docs/api.md',
      'docs/streaming.md',
      'docs/sdk.md',
      'docs/cli-and-console.md',
      'docs/operations.md',
      'docs/testing.md',
    ]),
  );
});

test.each(PAGES)('every relative link of %s resolves, #anchors included', (page) => {
  const links = relativeLinks(page, read(page));
  const broken = links.flatMap((link) => {
    const reason = brokenReason(link);
    return reason === null ? [] : [`${link.page}:${link.line} (${link.target}): ${reason}`];
  });
  expect(broken).toEqual([]);
});

test.each(PAGES)('%s mentions nothing outside the repository', (page) => {
  const lines = read(page).split('\n');
  const outside = lines.flatMap((line, i) => (/\.\.\/shared\b/.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : []));
  expect(outside).toEqual([]);
});

test('every docs/ section that code comments point to exists', () => {
  const code = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => /\.(ts|js|mjs|py)$/.test(file) && fs.existsSync(path.join(ROOT, file)));
  const broken = code.flatMap((file) =>
    [...read(file).matchAll(/docs\/[\w-]+\.md#[\w-]+/g)].flatMap(([target]) => {
      const reason = brokenReason({ page: 'README.md', line: 0, target });
      return reason === null ? [] : [`${file} (${target}): ${reason}`];
    }),
  );
  expect(broken).toEqual([]);
});

test(`README.md is a front page of at most ${README_MAX_LINES} lines`, () => {
  const lines = read('README.md').replace(/\n$/, '').split('\n').length;
  expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
});

describe('the heading ids links are checked against', () => {
  test.each([
    ['Quick start', 'quick-start'],
    ['Step 7b: the fact-check', 'step-7b-the-fact-check'],
    ['`turn.started`', 'turnstarted'],
    ['Fields added to `agent.thought` and `turn.failed`', 'fields-added-to-agentthought-and-turnfailed'],
    ['Descriptions are facts, inferences are findings', 'descriptions-are-facts-inferences-are-findings'],
    ['The `amy` CLI and the web console', 'the-amy-cli-and-the-web-console'],
    ['0 · classify vagueness', '0--classify-vagueness'],
  ])('%s → #%s', (heading, id) => expect(slug(heading)).toBe(id));

  test('a repeated heading gets a numbered id', () => {
    expect([...anchors('# A\n## Notes\n## Notes\n```\n# not a heading\n```\n')]).toEqual(['a', 'notes', 'notes-1']);
  });
});
