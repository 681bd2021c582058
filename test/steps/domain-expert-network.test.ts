/**
 * The Domain Expert with its network tools on (AMY_DE_NETWORK_TOOLS), through the real LLM layer, the scripted model
 * and the E-utilities stand-in: a knowledge question's answer cites a PubMed article found in that consultation, the
 * query sent is a general topic with nothing of the user's, an invented URL is still removed, and when PubMed cannot
 * be reached the consultation still answers, saying so.
 */
import { consultWithNetworkTools, standInPubMed } from '../support/domain-expert-consult';
import type { NetworkTools } from '../../platform/literature/network-tools';
import { domainExpert } from '../../dev/scripted-model/rules/domain-expert';
import type { ScriptedRequest, ScriptedResponse, ScriptedRule } from '../../dev/scripted-model/types';
import { startEutilsStandIn } from '../../dev/stand-ins/eutils';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let cannedRespond: (req: ScriptedRequest) => ScriptedResponse = () => ({ text: 'unset' });
const canned: ScriptedRule = { step: 'domain_expert', respond: (req) => cannedRespond(req) };

let h: StepHarness;
let c: StepHarness;
let eutils: StandInServer;
beforeAll(async () => {
  [h, c, eutils] = await Promise.all([
    startStepHarness({ rules: [domainExpert] }),
    startStepHarness({ rules: [canned] }),
    startEutilsStandIn(),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), c?.close(), eutils?.close()]);
});
beforeEach(() => {
  eutils.reset();
  eutils.requests.length = 0;
});

const networkTools = (): NetworkTools => ({ pubmed: standInPubMed(eutils.url), dataCommons: null });

const consult = (harness: StepHarness, question: string) =>
  consultWithNetworkTools(harness, networkTools(), question, '- Prefers evidence from randomised trials');

test('a knowledge question: PubMed is searched for the topic alone, and the answer cites an article it found', async () => {
  const result = await consult(h, 'What is heart rate variability?');
  const searches = eutils.requests.filter((url) => url.pathname.endsWith('/esearch.fcgi'));
  expect(searches.map((url) => url.searchParams.get('term'))).toEqual(['heart rate variability']);
  const pubmedUrl = result.urls.find((url) => url.startsWith('https://pubmed.ncbi.nlm.nih.gov/'));
  expect(pubmedUrl).toMatch(/^https:\/\/pubmed\.ncbi\.nlm\.nih\.gov\/990000\d\d\/$/);
  expect(result.answer).toContain(pubmedUrl);
});

test('PubMed unreachable: the consultation still answers, and says the literature could not be searched', async () => {
  eutils.fail({ kind: 'server_error', status: 503 });
  const result = await consult(h, 'What is heart rate variability?');
  expect(result.answer).toMatch(/could not search the published literature/);
  expect(result.urls.every((url) => !url.startsWith('https://pubmed.ncbi.nlm.nih.gov/'))).toBe(true);
});

test('a URL no tool of this consultation returned is removed, a PubMed one it found is kept', async () => {
  cannedRespond = (req) => {
    const searched = req.messages.some(
      (m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'),
    );
    if (!searched) return { toolUse: [{ name: 'pubmed_search', input: { topic: 'resting heart rate', max: 1 } }] };
    const found = /https:\/\/pubmed\.ncbi\.nlm\.nih\.gov\/\d+\//.exec(JSON.stringify(req.messages))![0];
    return { text: `See ${found} and https://invented.example.org/study for more.` };
  };
  const result = await consult(c, 'What is a normal resting heart rate?');
  expect(result.urls).toHaveLength(1);
  expect(result.answer).toContain(result.urls[0]);
  expect(result.answer).not.toContain('invented.example.org');
});
