// @ts-check
/**
 * The live view of one turn, built from its events as the SDK yields them (replayed, then live): the
 * questions the turn asks the user (docs/api.md#asking-back) with their options as buttons, the agents
 * with their timers and narration, the gates per finding, the Critic's verdicts, the answer with its
 * fact-sheet numbers marked, the fact-check's warnings, cost and duration.
 *
 * Narration arrives a few words per event, faster than a page should re-lay itself out, so
 * `agent.thought` only marks its agent; once per animation frame each marked agent's text is set
 * from `stream.text(agent)`: the agent's deltas concatenated, which are append-only (a retried step goes on
 * from what it had shown).
 */
// The gates and the agents as the server names them: the SDK bundles them from the API's contracts.
import { GATE_LABELS, GATE_NAMES, STREAM_AGENT_LABELS } from './amy-sdk.js';
import { append, byId, fill, h } from './dom.js';
import { factSheetNumbers } from './fact-numbers.js';
import { findingChart } from './finding-chart.js';
import { formatCost, formatDateTime, formatDuration, formatFactValue } from './format.js';

// The events as the SDK types them: `npm run typecheck` checks this module's reads against them.
/** @typedef {import('./amy-sdk.js').TurnStreamEvent} TurnStreamEvent */
/**
 * @template {import('./amy-sdk.js').TurnEventType} T
 * @typedef {import('./amy-sdk.js').TurnEventOf<T>} TurnEventOf
 */

const GATE_MARKS = { passed: '✓', failed: '✗', skipped: '–' };

const TICK_MS = 250;

/** A gate's numbers as a tooltip: `n: 160 · min_required: 10`. */
function describeDetail(detail) {
  return Object.entries(detail ?? {})
    .filter(([key]) => key !== 'applicable')
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : value}`)
    .join(' · ');
}

export class TurnView {
  #root = byId('turn');
  #els = {
    question: byId('turn-question'),
    status: byId('turn-status'),
    id: byId('turn-id'),
    created: byId('turn-created'),
    connection: byId('turn-connection'),
    cost: byId('turn-cost'),
    duration: byId('turn-duration'),
    notes: byId('turn-notes'),
    questionsSection: byId('questions-section'),
    questions: byId('questions'),
    agentsSection: byId('agents-section'),
    agents: byId('agents'),
    validationSection: byId('validation-section'),
    gates: /** @type {HTMLTableElement} */ (byId('gates')),
    critic: byId('critic'),
    charts: byId('charts'),
    answer: byId('answer'),
    validatorSummary: byId('validator-summary'),
    factCheck: byId('fact-check'),
    factSheet: byId('fact-sheet'),
    factSheetBlock: byId('fact-sheet-block'),
    personalAnchors: byId('personal-anchors'),
    personalAnchorsBlock: byId('personal-anchors-block'),
  };
  // The stream and the two calls below are the turn on screen's: open() sets them before anything can use them.
  /** @type {import('./amy-sdk.js').TurnStream} */
  #stream = /** @type {any} */ (null);
  /**
   * `(findingId) => Promise<series>` for the turn on screen: each finding's chart asks it once.
   * @type {(findingId: string) => Promise<import('./amy-sdk.js').FindingSeriesResponse>}
   */
  #loadSeries = /** @type {any} */ (null);
  /**
   * `(answer) => Promise` that posts an answer (`{ request_id, option_id }` or `{ request_id, text }`) for the turn on screen.
   * @type {(answer: import('./amy-sdk.js').TurnInputAnswer) => Promise<unknown>}
   */
  #sendAnswer = /** @type {any} */ (null);
  /** The turn's questions by request_id: each one's list item and parts. */
  #questions = new Map();
  #agents = new Map();
  #findings = new Map();
  #dirty = new Set();
  #frame = 0;
  #ticker = 0;
  /** @type {number | null} */
  #createdAt = null;
  /** @type {number | null} */
  #endedAt = null;
  #reconnects = 0;
  #answered = false;

  constructor() {
    fill(
      this.#els.gates.tHead,
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Finding'),
        GATE_NAMES.map((gate) => h('th', { scope: 'col', dataset: { gate }, title: gate }, GATE_LABELS[gate])),
        h('th', { scope: 'col' }, 'Critic'),
      ),
    );
  }

  /**
   * Empties the view for `turnId`; `stream` is the TurnStream whose events will follow, and
   * `loadSeries(findingId)` gives a finding's series for its chart, `sendAnswer(answer)` posts the user's
   * answer to a question (and rejects with the API's error).
   */
  open(turnId, stream, loadSeries, sendAnswer) {
    this.#stopTicking();
    cancelAnimationFrame(this.#frame);
    this.#stream = stream;
    this.#loadSeries = loadSeries;
    this.#sendAnswer = sendAnswer;
    this.#questions.clear();
    this.#agents.clear();
    this.#findings.clear();
    this.#dirty.clear();
    this.#frame = 0;
    this.#createdAt = null;
    this.#endedAt = null;
    this.#reconnects = 0;
    this.#answered = false;
    this.#root.hidden = false;
    this.#root.dataset.turnId = turnId;
    this.#root.dataset.reconnects = '0';
    this.#root.dataset.answered = 'false';
    this.#els.id.textContent = turnId;
    for (const key of ['question', 'created', 'cost', 'duration', 'answer', 'validatorSummary']) {
      this.#els[key].textContent = '';
    }
    for (const key of [
      'notes',
      'questions',
      'agents',
      'critic',
      'charts',
      'factCheck',
      'factSheet',
      'personalAnchors',
    ]) {
      fill(this.#els[key]);
    }
    fill(this.#els.gates.tBodies[0]);
    this.#els.questionsSection.hidden = true;
    this.#els.agentsSection.hidden = true;
    this.#els.validationSection.hidden = true;
    this.#els.factCheck.hidden = true;
    this.#els.factSheetBlock.hidden = true;
    this.#els.personalAnchorsBlock.hidden = true;
    this.#setStatus('queued');
    this.setConnection('connecting', 'Connecting…');
    this.#ticker = setInterval(() => requestAnimationFrame(() => this.#tick()), TICK_MS);
  }

  /** What the stored Turn says before any event: the question, when it was asked, and how it ended if it has. */
  showTurn(turn) {
    const question = [...turn.messages].reverse().find((m) => m.role === 'user');
    this.#els.question.textContent = question?.content ?? '';
    this.#els.created.textContent = `asked ${formatDateTime(turn.created_at)}`;
    this.#createdAt = Date.parse(turn.created_at);
    if (turn.completed_at) this.#endedAt = Date.parse(turn.completed_at);
    this.#setStatus(turn.status);
    // A turn opened while it waits: its question, before its events (which ask it again) have come.
    if (turn.status === 'waiting_for_input' && turn.pending_input) this.#inputRequired(turn.pending_input);
    this.#tick();
  }

  setConnection(state, text) {
    this.#els.connection.dataset.state = state;
    this.#els.connection.textContent = text;
  }

  /** The SDK lost the connection and is about to resume after the last event it yielded. */
  noteReconnect({ attempt, delayMs }) {
    this.#reconnects += 1;
    this.#root.dataset.reconnects = String(this.#reconnects);
    this.setConnection('reconnecting', `Connection lost; reconnecting in ${formatDuration(delayMs)} (try ${attempt})`);
  }

  /** @param {TurnStreamEvent} event */
  apply(event) {
    if (this.#els.connection.dataset.state !== 'live') {
      const resumed = this.#reconnects ? ` · resumed after ${this.#reconnects} reconnect(s)` : '';
      this.setConnection('live', `Live${resumed}`);
    }
    switch (event.type) {
      case 'turn.started':
        this.#setStatus('running');
        break;
      case 'agent.started':
        this.#agentStarted(event);
        break;
      case 'agent.thought':
        this.#markText(event.agent);
        break;
      case 'agent.completed':
        this.#agentCompleted(event);
        break;
      case 'step.retry':
        // Nothing shown is taken back: the step goes on from where its text stands.
        this.#note('retry', `Step ${event.step} is running again (attempt ${event.attempt}): ${event.reason}`);
        break;
      case 'validator.gate':
        this.#gate(event);
        break;
      case 'validator.critic':
        this.#critic(event);
        break;
      case 'fact_check':
        this.#factCheck(event.issues);
        break;
      case 'turn.input_required':
        this.#setStatus('waiting_for_input');
        this.#inputRequired(event);
        break;
      case 'turn.input_received':
        this.#setStatus('running');
        this.#inputReceived(event);
        break;
      case 'cost_warning':
        this.#note(
          'warning',
          `This turn has cost ${formatCost(event.cost_usd)}, past the ${formatCost(event.threshold_usd)} warning threshold.`,
        );
        break;
      case 'turn.completed':
        this.#completed(event);
        break;
      case 'turn.failed':
        this.#failed(event);
        break;
      case 'turn.retried':
        this.#endedAt = null;
        this.#setStatus('running');
        this.#note('retry', `An operator retried the turn: attempt ${event.attempt} resumes where it failed.`);
        break;
    }
  }

  /** The stream has ended, or the view is about to show another turn. */
  close() {
    this.#stopTicking();
    this.#flushText();
    this.#tick();
  }

  /** Nothing of the turn stays on screen (the key was forgotten). */
  hide() {
    this.#stopTicking();
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.#root.hidden = true;
  }

  #setStatus(status) {
    this.#els.status.dataset.status = status;
    this.#els.status.textContent = status;
    this.#root.dataset.status = status;
  }

  #note(kind, text) {
    append(this.#els.notes, [h('li', { className: `note note-${kind}` }, text)]);
  }

  /**
   * A question the turn asks: what it asks, a confirmation's estimate, until when the turn waits and what it goes on
   * with then, and an answer to click (or to type, when the question takes free text). Shown once per request_id.
   */
  #inputRequired(request) {
    if (this.#questions.has(request.request_id)) return;
    const labelOf = (optionId) => request.options.find((o) => o.id === optionId)?.label ?? optionId;
    const els = {
      buttons: request.options.map((option) =>
        h('button', { type: 'button', className: 'input-option', dataset: { optionId: option.id } }, option.label),
      ),
      text: request.free_text
        ? h('input', {
            type: 'text',
            className: 'input-text',
            maxLength: 2000,
            placeholder: 'Or answer in your own words',
          })
        : null,
      send: request.free_text ? h('button', { type: 'submit', className: 'input-send' }, 'Send') : null,
      outcome: h('p', { className: 'input-outcome' }),
      error: h('p', { className: 'error input-error', role: 'alert' }),
    };
    const estimate = request.estimate
      ? h(
          'p',
          { className: 'input-estimate' },
          `Estimate: about ${formatCost(request.estimate.cost_usd)} and ${formatDuration(request.estimate.duration_seconds * 1000)}.`,
        )
      : null;
    const expiry = h(
      'p',
      { className: 'input-expiry' },
      'Waiting for your answer until ',
      h('time', { dateTime: request.expires_at }, formatDateTime(request.expires_at)),
      `; without one, the turn goes on with “${labelOf(request.default_option_id)}”.`,
    );
    const form = h(
      'form',
      { className: 'input-answer' },
      h('div', { className: 'input-options' }, els.buttons),
      els.text ? h('div', { className: 'row input-free-text' }, els.text, els.send) : null,
    );
    const item = h(
      'li',
      { className: 'input-request', dataset: { requestId: request.request_id, kind: request.kind, state: 'waiting' } },
      h('p', { className: 'input-question' }, request.question),
      estimate,
      expiry,
      form,
      els.outcome,
      els.error,
    );
    const question = { item, els, labelOf };
    for (const button of els.buttons) {
      button.addEventListener('click', () =>
        this.#answer(question, { request_id: request.request_id, option_id: button.dataset.optionId }, button),
      );
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = els.text?.value.trim();
      if (text) void this.#answer(question, { request_id: request.request_id, text }, els.send);
    });
    this.#questions.set(request.request_id, question);
    this.#els.questions.append(item);
    this.#els.questionsSection.hidden = false;
  }

  /**
   * Posts an answer with the question's controls disabled. A refusal shows the API's message; only a failure that
   * may pass (not a 409 or 410, which say the question takes no answer any more) lets the user try again.
   */
  async #answer(question, answer, control) {
    const { item, els } = question;
    this.#setAnswerable(question, false);
    els.error.textContent = '';
    control.classList.add('chosen');
    item.dataset.state = 'sending';
    try {
      await this.#sendAnswer(answer);
      if (item.dataset.state === 'sending') item.dataset.state = 'sent';
    } catch (err) {
      els.error.textContent = err instanceof Error ? err.message : String(err);
      // The turn's own event may have settled the question meanwhile: what it says stands.
      if (item.dataset.state !== 'sending') return;
      control.classList.remove('chosen');
      const refused = err?.status === 409 || err?.status === 410;
      item.dataset.state = refused ? 'closed' : 'waiting';
      if (!refused) this.#setAnswerable(question, true);
    }
  }

  #setAnswerable({ els }, answerable) {
    for (const control of [...els.buttons, els.text, els.send]) if (control) control.disabled = !answerable;
  }

  /** What the turn went on with: the user's option or text, or at the deadline the default. */
  /** @param {TurnEventOf<'turn.input_received'>} event */
  #inputReceived({ request_id, option_id, text, source }) {
    const question = this.#questions.get(request_id);
    if (!question) return;
    const { item, els, labelOf } = question;
    // A refusal stays on screen (another client may have answered first): the outcome below says what counts.
    this.#setAnswerable(question, false);
    item.dataset.state = source === 'expiry' ? 'expired' : 'answered';
    for (const button of els.buttons) {
      button.classList.toggle('chosen', source === 'user' && button.dataset.optionId === option_id);
    }
    els.send?.classList.toggle('chosen', source === 'user' && option_id === null);
    if (source === 'expiry') els.outcome.textContent = `No answer: went on with “${labelOf(option_id)}”.`;
    else if (option_id !== null) els.outcome.textContent = `You chose “${labelOf(option_id)}”.`;
    else els.outcome.textContent = `You answered: “${text}”.`;
  }

  /** The turn has ended: a question still open takes no answer. */
  #closeQuestions() {
    for (const question of this.#questions.values()) {
      const { state } = question.item.dataset;
      if (state !== 'waiting' && state !== 'sending') continue;
      this.#setAnswerable(question, false);
      question.item.dataset.state = 'closed';
    }
  }

  /** @param {TurnEventOf<'agent.started'>} event */
  #agentStarted({ agent, at, question }) {
    let card = this.#agents.get(agent);
    if (!card) {
      const els = {
        state: h('span', { className: 'agent-state' }),
        timer: h('span', { className: 'agent-timer' }),
        cost: h('span', { className: 'agent-cost' }),
        question: h('p', { className: 'agent-question' }),
        thoughts: h('div', { className: 'agent-thoughts', hidden: true }),
        summary: h('p', { className: 'agent-summary' }),
      };
      const item = h(
        'li',
        { className: 'agent', dataset: { agent } },
        h(
          'div',
          { className: 'agent-head' },
          h('span', { className: 'agent-name' }, STREAM_AGENT_LABELS[agent] ?? agent),
          [els.state, els.timer, els.cost],
        ),
        els.question,
        els.thoughts,
        els.summary,
      );
      card = { item, els, startedAt: 0, durationMs: null };
      this.#agents.set(agent, card);
      this.#els.agents.append(item);
      this.#els.agentsSection.hidden = false;
    }
    // A reflection follow-up starts the same agent again: the card runs again.
    Object.assign(card, { startedAt: Date.parse(at), durationMs: null });
    card.item.dataset.state = 'running';
    card.els.state.textContent = 'working';
    card.els.question.textContent = question;
    card.els.cost.textContent = '';
    card.els.summary.textContent = '';
  }

  /** @param {TurnEventOf<'agent.completed'>} event */
  #agentCompleted({ agent, duration_ms, cost_usd, output_summary }) {
    const card = this.#agents.get(agent);
    if (!card) return;
    card.durationMs = duration_ms;
    card.item.dataset.state = 'done';
    card.els.state.textContent = 'done';
    card.els.timer.textContent = formatDuration(duration_ms);
    card.els.cost.textContent = formatCost(cost_usd);
    // Synthesis's summary is the start of the answer, which the answer panel shows whole.
    if (agent !== 'synthesis') card.els.summary.textContent = output_summary;
  }

  #markText(agent) {
    this.#dirty.add(agent);
    this.#frame ||= requestAnimationFrame(() => this.#flushText());
  }

  #flushText() {
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    for (const agent of this.#dirty) {
      const text = this.#stream.text(agent);
      // Synthesis streams the answer itself; once the turn has completed, the result's answer stands.
      if (agent === 'synthesis') {
        if (!this.#answered) this.#els.answer.textContent = text;
        continue;
      }
      const card = this.#agents.get(agent);
      if (!card) continue;
      const box = card.els.thoughts;
      const following = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
      box.textContent = text;
      box.hidden = text === '';
      if (following) box.scrollTop = box.scrollHeight;
    }
    this.#dirty.clear();
  }

  #findingRow(findingId, claim) {
    let finding = this.#findings.get(findingId);
    if (!finding) {
      const cells = new Map(
        GATE_NAMES.map((gate) => [gate, h('td', { className: 'gate', dataset: { gate }, title: 'not run' })]),
      );
      const claimEl = h('span', { className: 'finding-claim' });
      const critic = h('td', { className: 'critic-verdict' });
      const row = h(
        'tr',
        { dataset: { finding: findingId } },
        h('th', { scope: 'row' }, h('code', {}, findingId), claimEl),
        [...cells.values()],
        critic,
      );
      const loadSeries = this.#loadSeries;
      const chartClaim = h('span', { className: 'finding-claim' });
      const chart = h(
        'figure',
        { className: 'chart', dataset: { finding: findingId } },
        h('figcaption', {}, h('code', {}, findingId), ' ', chartClaim),
        findingChart(() => loadSeries(findingId)),
      );
      finding = { row, cells, claimEl, chartClaim, critic };
      this.#findings.set(findingId, finding);
      this.#els.gates.tBodies[0].append(row);
      this.#els.charts.append(chart);
      this.#els.validationSection.hidden = false;
    }
    if (claim) {
      finding.claimEl.textContent = claim;
      finding.chartClaim.textContent = claim;
    }
    return finding;
  }

  /** @param {TurnEventOf<'validator.gate'>} event */
  #gate({ finding_id, claim, gate, verdict, detail }) {
    const cell = this.#findingRow(finding_id, claim).cells.get(gate);
    if (!cell) return;
    cell.textContent = GATE_MARKS[verdict] ?? verdict;
    cell.dataset.verdict = verdict;
    cell.title = `${gate}: ${verdict}${detail ? ` — ${describeDetail(detail)}` : ''}`;
  }

  /** @param {TurnEventOf<'validator.critic'>} event */
  #critic({ finding_id, verdict, reasoning, concerns }) {
    const finding = this.#findingRow(finding_id);
    finding.critic.textContent = verdict;
    finding.critic.dataset.verdict = verdict;
    // The event leaves a concern's shape open: this reads the Critic's (category, severity, detail), anything else as JSON.
    const concernItems = concerns.map((/** @type {any} */ c) =>
      h(
        'li',
        { className: 'concern', dataset: { severity: c.severity ?? '' } },
        c.category ? `${c.category.replace(/_/g, ' ')} (${c.severity}): ${c.detail}` : JSON.stringify(c),
      ),
    );
    append(this.#els.critic, [
      h(
        'li',
        { dataset: { finding: finding_id } },
        h('p', {}, h('code', {}, finding_id), ' ', h('span', { className: 'verdict', dataset: { verdict } }, verdict)),
        h('p', { className: 'reasoning' }, reasoning),
        concernItems.length ? h('ul', { className: 'concerns' }, concernItems) : null,
      ),
    ]);
  }

  /** @param {TurnEventOf<'fact_check'>['issues']} issues */
  #factCheck(issues) {
    const list = this.#els.factCheck;
    list.hidden = false;
    fill(
      list,
      issues.length === 0
        ? h(
            'li',
            { className: 'fact-check-ok' },
            'Fact-check: every number in the answer traces to the fact sheet or your personal anchors.',
          )
        : issues.map((issue) =>
            h(
              'li',
              { className: 'fact-check-warning' },
              `Fact-check warning: ${issue.value} does not trace to the fact sheet.`,
            ),
          ),
    );
  }

  /** @param {TurnEventOf<'turn.completed'>} event */
  #completed({ result, snapshot }) {
    this.#answered = true;
    this.#root.dataset.answered = 'true';
    this.#setStatus('completed');
    this.#closeQuestions();
    if (snapshot) this.#note('info', 'This turn’s events are past their replay window: showing the stored turn.');
    // Turns completed before anchors had a field of their own have none (theirs are on the fact sheet).
    const anchors = result.personal_anchors ?? [];
    this.#renderAnswer(result.answer, result.fact_sheet, anchors);
    this.#renderFacts(this.#els.factSheetBlock, this.#els.factSheet, result.fact_sheet);
    this.#renderFacts(this.#els.personalAnchorsBlock, this.#els.personalAnchors, anchors);
    const v = result.validator;
    if (v.findings_total > 0) {
      this.#els.validatorSummary.textContent =
        `${v.findings_total} finding(s) checked: ${v.findings_validated} validated, ` +
        `${v.findings_conditional} conditional, ${v.findings_rejected} rejected.`;
    }
    this.#els.cost.textContent = formatCost(result.cost_usd);
    this.#els.duration.textContent = formatDuration(result.duration_ms);
    this.#stopTicking();
  }

  /** @param {TurnEventOf<'turn.failed'>} event */
  #failed({ error, cost_usd }) {
    this.#setStatus('failed');
    this.#closeQuestions();
    this.#note('error', `The turn failed: ${error.message} (${error.code})`);
    this.#els.cost.textContent = formatCost(cost_usd);
    this.#endedAt ??= Date.now();
    this.#tick();
    this.#stopTicking();
  }

  /**
   * The answer as text nodes, with each number that a fact-sheet value or a personal anchor stands behind in a
   * <mark> that says which.
   */
  #renderAnswer(answer, factSheet, anchors) {
    const parts = [];
    let at = 0;
    for (const { start, end, fact } of factSheetNumbers(answer, [...factSheet, ...anchors])) {
      parts.push(answer.slice(at, start));
      const anchor = anchors.includes(fact);
      const title = `${fact.claim} = ${fact.value}${fact.unit ? ` ${fact.unit}` : ''} (${anchor ? 'personal anchor' : 'fact sheet'})`;
      const dataset = { claim: fact.claim, source: anchor ? 'personal_anchor' : 'fact_sheet' };
      parts.push(h('mark', { className: 'fact', title, dataset }, answer.slice(start, end)));
      at = end;
    }
    parts.push(answer.slice(at));
    fill(this.#els.answer, parts);
  }

  /** A list of fact-sheet entries or personal anchors (`{ claim, value, unit, n, window }`), hidden when empty. */
  #renderFacts(block, list, facts) {
    block.hidden = facts.length === 0;
    fill(
      list,
      facts.map((fact) =>
        h(
          'li',
          {},
          h('code', {}, fact.claim),
          ' ',
          h(
            'strong',
            { title: String(fact.value) },
            `${formatFactValue(fact.value)}${fact.unit ? ` ${fact.unit}` : ''}`,
          ),
          [
            fact.label ? ` · ${fact.label}` : '',
            fact.n !== null ? ` · n = ${fact.n}` : '',
            fact.window ? ` · ${fact.window}` : '',
          ].join(''),
          fact.verdict ? h('span', { className: 'conditional' }, ` ${fact.verdict}`) : null,
        ),
      ),
    );
  }

  #tick() {
    const now = Date.now();
    for (const card of this.#agents.values()) {
      if (card.durationMs === null && card.startedAt) {
        card.els.timer.textContent = formatDuration(Math.max(0, now - card.startedAt));
      }
    }
    if (this.#createdAt !== null && !this.#answered) {
      this.#els.duration.textContent = formatDuration(Math.max(0, (this.#endedAt ?? now) - this.#createdAt));
    }
  }

  #stopTicking() {
    clearInterval(this.#ticker);
    this.#ticker = 0;
  }
}
