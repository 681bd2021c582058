/**
 * The Domain Expert never invents a URL: every http(s) URL in its answer must appear in a
 * tool result of the same consultation. A prompt only asks for that; this guard enforces it on the text.
 */

/** A URL as it runs on in prose; trailing punctuation and an unbalanced `)` are trimmed off afterwards. */
const BARE_URL = String.raw`https?:\/\/[^\s<>"'\`\]]+`;
/** A markdown link's target may hold one level of balanced parentheses, as DOIs do: `(21)00302-9`. */
const LINK_URL = String.raw`https?:\/\/(?:[^\s()<>]|\([^\s()<>]*\))+`;

const URL_TOKEN = new RegExp(
  String.raw`\[([^\]\n]*)\]\((${LINK_URL})(?:\s+"[^"\n]*")?\)|<(${BARE_URL})>|(${BARE_URL})`,
  'g',
);

const count = (text: string, ch: string) => text.split(ch).length - 1;

/** `https://x.org/a).` → `https://x.org/a`; a `)` that closes a `(` inside the URL stays. */
function trimUrl(raw: string): string {
  let url = raw;
  for (;;) {
    if (/[.,;:!?*_~'"]$/.test(url)) url = url.slice(0, -1);
    else if (url.endsWith(')') && count(url, '(') < count(url, ')')) url = url.slice(0, -1);
    else return url;
  }
}

/** Every URL in a text, as the guard reads them. */
export function urlsIn(text: string): string[] {
  return [...text.matchAll(new RegExp(BARE_URL, 'g'))].map((m) => trimUrl(m[0]));
}

export interface GuardedAnswer {
  text: string;
  /** URLs left in the answer, in order of first appearance. */
  kept: string[];
  /** URLs taken out, in order, repeats included. */
  removed: string[];
}

/** What removing a URL leaves behind: `()`, `<>`, doubled spaces, a space or a comma before punctuation. */
function tidyAfterRemoval(text: string): string {
  return text
    .replace(/\(\s*\)/g, '')
    .replace(/<\s*>/g, '')
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/[ \t]+([.,;:!?])/g, '$1')
    .replace(/[,;:]+([.!?])/g, '$1')
    .replace(/[ \t]+$/gm, '');
}

/**
 * Removes every URL not in `allowed`: a markdown link to one keeps its text, a bare or `<…>` URL goes.
 * The comparison is exact, so a URL the model shortened, extended or re-cased is not the tool's URL.
 */
export function guardUrls(answer: string, allowed: ReadonlySet<string>): GuardedAnswer {
  const kept: string[] = [];
  const removed: string[] = [];
  const keep = (url: string) => {
    if (!kept.includes(url)) kept.push(url);
  };
  const text = answer.replace(
    URL_TOKEN,
    (match, linkText: string | undefined, linkUrl: string | undefined, angled: string | undefined, bare?: string) => {
      if (linkUrl !== undefined) {
        if (allowed.has(linkUrl)) {
          keep(linkUrl);
          return match;
        }
        removed.push(linkUrl);
        // The link text may itself be a URL.
        const inner = guardUrls(linkText ?? '', allowed);
        inner.kept.forEach(keep);
        removed.push(...inner.removed);
        return inner.text;
      }
      if (angled !== undefined) {
        if (allowed.has(angled)) {
          keep(angled);
          return match;
        }
        removed.push(angled);
        return '';
      }
      const raw = bare ?? '';
      const url = trimUrl(raw);
      const tail = raw.slice(url.length);
      if (allowed.has(url)) {
        keep(url);
        return match;
      }
      removed.push(url);
      return tail;
    },
  );
  return { text: removed.length > 0 ? tidyAfterRemoval(text) : text, kept, removed };
}
