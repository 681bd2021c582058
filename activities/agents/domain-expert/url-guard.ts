/**
 * The Domain Expert never invents a URL: every http(s) URL in its answer must appear in a
 * tool result of the same consultation. A prompt only asks for that; this guard enforces it on the text.
 */

/** A URL as it runs on in prose; trailing punctuation and an unbalanced `)` are trimmed off afterwards. */
const BARE_URL = String.raw`https?:\/\/[^\s<>"'\`\]]+`;
/** A markdown link's target may hold one level of balanced parentheses, as DOIs do: `(21)00302-9`. */
const LINK_URL = String.raw`https?:\/\/(?:[^\s()<>]|\([^\s()<>]*\))+`;

const MARKDOWN_LINK = String.raw`\[([^\]\n]*)\]\((${LINK_URL})(?:\s+"[^"\n]*")?\)`;
const URL_TOKEN = new RegExp(String.raw`${MARKDOWN_LINK}|<(${BARE_URL})>|(${BARE_URL})`, 'g');

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

/**
 * A markdown link that the text so far may still be writing, from its `[` to the end: its text, then
 * `](`, its URL (one level of parentheses), an optional title, with the closing `)` still to come.
 */
const OPEN_LINK = /\[[^\]\n]*(?:\](?:\((?:[^\s()<>]|\([^\s()<>]*\)?)*(?:\s+(?:"[^"\n]*"?)?)?)?)?$/;

/**
 * Where text that is still arriving can be cut so that what comes before is guarded exactly as it
 * would be with what follows: before the last word (a URL runs on until whitespace), before a link
 * still being written, and before the blanks and the `,;:` that a removal there would tidy away.
 */
function releasableLength(text: string): number {
  let cut = text.search(/\s*\S*$/);
  const link = OPEN_LINK.exec(text);
  if (link) cut = Math.min(cut, link.index);
  // A whole link, its text or title with blanks in it, is guarded whole too.
  for (const whole of text.matchAll(new RegExp(MARKDOWN_LINK, 'g'))) {
    if (whole.index < cut && cut < whole.index + whole[0].length) cut = whole.index;
  }
  while (cut > 0 && /\s/.test(text[cut - 1])) cut--;
  while (cut > 0 && /[,;:]/.test(text[cut - 1])) cut--;
  return cut;
}

/**
 * guardUrls for text that arrives in pieces, as a model streams it: each piece is released, guarded,
 * as soon as nothing that follows could make it part of a URL or of a link around one, so that no URL
 * a tool did not return is ever shown, even for a moment. Leading and trailing blanks are left out, so
 * the pieces released add up to the trimmed, guarded text. What a removal leaves is tidied where it
 * happened; unlike guardUrls on the whole text, blanks elsewhere are left as the model wrote them.
 */
export class StreamingUrlGuard {
  private held = '';
  /** Everything released so far. */
  text = '';
  readonly kept: string[] = [];
  readonly removed: string[] = [];

  /** `allowed` grows as the reply goes on: a server tool's result arrives in the reply, before the text citing it. */
  constructor(private readonly allowed: Set<string>) {}

  /** A URL a tool returned during the reply: text that follows may cite it. */
  allow(url: string): void {
    this.allowed.add(url);
  }

  /** Takes the next piece; returns what can be shown now ('' while a possible URL is still open). */
  push(delta: string): string {
    this.held += delta;
    const cut = releasableLength(this.held);
    const ready = this.held.slice(0, cut);
    this.held = this.held.slice(cut);
    return this.release(ready);
  }

  /** The text is complete: the rest, guarded. */
  end(): string {
    const rest = this.held;
    this.held = '';
    return this.release(rest, true);
  }

  private release(piece: string, last = false): string {
    if (piece === '') return '';
    const guarded = guardUrls(piece, this.allowed);
    guarded.kept.forEach((url) => this.kept.includes(url) || this.kept.push(url));
    this.removed.push(...guarded.removed);
    let out = this.text === '' ? guarded.text.trimStart() : guarded.text;
    if (last) out = out.trimEnd();
    this.text += out;
    return out;
  }
}
