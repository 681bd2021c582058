import type { ScriptedRule } from '../types';

/**
 * Step 7 (seed 002): the answer, built only from the prompt's FACT SHEET and findings blurb, so every
 * number it states is a fact-sheet value. With the DS-failed warning it states no number at all.
 */

interface Fact {
  claim: string;
  value: number;
  unit: string | null;
  conditional: boolean;
}

const FACT_LINE = /^- (\S+) = (-?[\d.e+-]+)(?: (\S+))? \(n=[^)]*\) \[(VALIDATED|CONDITIONAL)\]$/;
const FINDING_LINE = /^- (\S+) \[(VALIDATED|CONDITIONAL)\]: (.+)$/;

function section(text: string, name: string): string[] {
  // The block runs to the next `NAME:` header or to the end of the prompt (not of the line).
  const match = new RegExp(`^${name}:\\n([\\s\\S]*?)(?:\\n\\n[A-Z ]+:|(?![\\s\\S]))`, 'm').exec(text);
  return match ? match[1].split('\n') : [];
}

function readFacts(text: string): Fact[] {
  return section(text, 'FACT SHEET').flatMap((line) => {
    const m = FACT_LINE.exec(line.trim());
    return m ? [{ claim: m[1], value: Number(m[2]), unit: m[3] ?? null, conditional: m[4] === 'CONDITIONAL' }] : [];
  });
}

function readFindings(text: string): Array<{ id: string; conditional: boolean; claim: string; mechanism?: string }> {
  const lines = section(text, 'VALIDATED FINDINGS');
  return lines.flatMap((line, i) => {
    const m = FINDING_LINE.exec(line.trim());
    if (!m) return [];
    const mechanism = /^\s+mechanism: (.+)$/.exec(lines[i + 1] ?? '')?.[1];
    return [{ id: m[1], conditional: m[2] === 'CONDITIONAL', claim: m[3], mechanism }];
  });
}

const round = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toFixed(2))));

/** The Domain Expert's or the coach's own draft leads the answer; a Data Science draft is only notes. */
function leadingDraft(text: string): string {
  const main = /^MAIN AGENT: (.+)$/m.exec(text)?.[1];
  if (main !== 'Domain Expert Agent' && main !== 'Health Coach Agent') return '';
  const draft = section(text, 'MAIN AGENT DRAFT').join('\n').trim();
  return draft === '(none)' ? '' : draft;
}

const DS_FAILED =
  "I couldn't complete the analysis of your data this time, so I won't quote a result I can't stand behind.";
const NOTHING_HELD_UP =
  "Nothing in your data held up well enough for me to state it with confidence, so I'd rather not quote numbers. " +
  "We'd need to look more closely with a narrower question.";

export const synthesis: ScriptedRule<'synthesis'> = {
  step: 'synthesis',
  respond(req) {
    const text = req.lastUserText;
    const draft = leadingDraft(text);
    if (text.includes('DATA SCIENCE STATUS: FAILED')) {
      const followUp = draft || 'Could we narrow it down, for example to one metric over the last few weeks?';
      return { text: `${DS_FAILED} ${followUp}` };
    }
    const facts = readFacts(text);
    const paragraphs = readFindings(text).map((finding) => {
      const own = facts.filter((f) => f.claim.startsWith(`${finding.id}.`));
      const numbers = own
        .filter((f) => !f.claim.endsWith('.n'))
        .map(
          (f) =>
            `${f.claim.slice(finding.id.length + 1).replace(/_/g, ' ')} ${round(f.value)}${f.unit ? ` ${f.unit}` : ''}`,
        )
        .join(', ');
      const lead = finding.conditional ? 'A preliminary signal, worth tracking: ' : '';
      const mechanism = finding.mechanism ? ` ${finding.mechanism}` : '';
      return numbers ? `${lead}${finding.claim} (${numbers}).${mechanism}` : '';
    });
    // The coach's draft goes last, so the answer ends with the coach's forward question.
    const answer = [...paragraphs, draft].filter(Boolean).join('\n\n');
    return { text: answer || NOTHING_HELD_UP };
  },
};
