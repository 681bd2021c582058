/**
 * The product contract's browser client (Streaming, "Browser (EventSource)"), as the contract prints it, and a
 * page around it for headless Chromium. The page defines what the sample takes as given (`turnId`, `apiKey`,
 * `render`, and an element per agent whose id is the agent's name); https://api.amy.health is replaced by the
 * API's address. Nothing else of the sample changes: a client written straight from the contract.
 */
import { STREAM_AGENTS } from '../../contracts/event-catalog';

const CONTRACT_BROWSER_SAMPLE = `const url = \`https://api.amy.health/v1/turns/\${turnId}/events\`;
// EventSource cannot set custom headers — pass the API key as a query
// string fallback, or proxy through your own backend that adds the
// Authorization header server-side.
const es = new EventSource(\`\${url}?api_key=\${apiKey}\`);
es.addEventListener("turn.started", (e) => {
console.log("Started:", JSON.parse(e.data));
});
es.addEventListener("agent.thought", (e) => {
const { agent, delta } = JSON.parse(e.data);
document.getElementById(agent).textContent += delta;
});
es.addEventListener("turn.completed", (e) => {
const { result } = JSON.parse(e.data);
render(result.answer);
es.close();
});
es.addEventListener("turn.failed", (e) => {
const { error } = JSON.parse(e.data);
console.error(error.code, error.message);
es.close();
});`;

/**
 * The page. `watchTurn(turnId, apiKey)` runs the sample and resolves when it renders the answer, or when the
 * browser gives the EventSource up (a stream the page may not read ends so, at once). The EventSource
 * constructor is wrapped only to see that end: the sample itself is untouched. `render` puts the answer in
 * `#answer`, so the page holds both what streamed (`#synthesis`) and what the turn ended with.
 * `send(url, init)` is a fetch that reports the status, the body and the headers a page can read.
 */
export function contractSamplePage(apiBase: string): string {
  const sample = CONTRACT_BROWSER_SAMPLE.replace('https://api.amy.health', apiBase);
  return `<!doctype html>
<html>
  <head><meta charset="utf-8" /><title>Amy on another origin</title><link rel="icon" href="data:," /></head>
  <body>
    ${STREAM_AGENTS.map((agent) => `<pre id="${agent}"></pre>`).join('\n    ')}
    <div id="answer"></div>
    <script>
      window.watchTurn = (turnId, apiKey) =>
        new Promise((resolve) => {
          const NativeEventSource = window.EventSource;
          const EventSource = class extends NativeEventSource {
            constructor(...args) {
              super(...args);
              this.addEventListener('error', () => {
                if (this.readyState === NativeEventSource.CLOSED) resolve({ ended: 'the browser closed the EventSource' });
              });
            }
          };
          const render = (answer) => {
            document.getElementById('answer').textContent = answer;
            resolve({ ended: 'rendered' });
          };
          ${sample}
        });
      window.send = async (url, init) => {
        try {
          const res = await fetch(url, init);
          const readable = ['x-request-id', 'retry-after', 'idempotent-replayed', 'location'];
          return {
            status: res.status,
            body: await res.json(),
            headers: Object.fromEntries(readable.map((name) => [name, res.headers.get(name)])),
          };
        } catch (err) {
          return { failed: String(err) };
        }
      };
    </script>
  </body>
</html>
`;
}

/** What the page's globals look like from a `page.evaluate` callback (this project compiles without the DOM lib). */
export interface ContractSamplePage {
  watchTurn(turnId: string, apiKey: string): Promise<{ ended: string }>;
  send(
    url: string,
    init: unknown,
  ): Promise<
    | {
        status: number;
        body: unknown;
        headers: Record<'x-request-id' | 'retry-after' | 'idempotent-replayed' | 'location', string | null>;
      }
    | { failed: string }
  >;
  document: { getElementById(id: string): { textContent: string } | null };
}
