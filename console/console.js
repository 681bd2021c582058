/**
 * The console: the API key (in this tab's session storage only; the SDK sends it as `Authorization`,
 * never in a URL), a question box, the live view of the turn named in the URL's fragment
 * (`#turn=turn_…`, so a reload reopens it), the recent turns and the memory.
 *
 * A turn is always shown from its first event: opening one streams its log from the start (replayed
 * while the replay window lasts, then live), and after the window the SDK yields the terminal event
 * built from the stored Turn. Losing the connection is the SDK's to handle: it resumes after the last
 * event it yielded. Should it give up, the turn is reopened when the browser is back online, or on
 * "Reconnect".
 *
 * The console can answer questions (docs/api.md#asking-back): it asks with `interaction`, so a turn may pause
 * for a confirmation or a clarification, which the turn view shows with its options as buttons.
 */
import { Amy, AuthenticationError, ConcurrencyLimitError, NotFoundError, StreamDisconnectedError } from './amy-sdk.js';
import { byId } from './dom.js';
import { MemoryList, RecentTurns } from './lists.js';
import { TurnView } from './turn-view.js';

const KEY_STORAGE = 'amy.apiKey';
const TURN_FRAGMENT = /^#turn=(turn_[0-9A-HJKMNP-TV-Z]{26})$/;
/** The kinds of question a person at the console can answer: every kind. */
const INTERACTION = { accepts: ['confirmation', 'clarification'] };

const els = {
  keyPanel: byId('key-panel'),
  keyForm: byId('key-form'),
  keyInput: byId('api-key'),
  keyError: byId('key-error'),
  session: byId('session'),
  keyHint: byId('key-hint'),
  forget: byId('forget-key'),
  workspace: byId('workspace'),
  askForm: byId('ask-form'),
  question: byId('question'),
  ask: byId('ask'),
  cancel: byId('cancel-turn'),
  reconnect: byId('reconnect-turn'),
  notice: byId('notice'),
  refreshTurns: byId('recent-refresh'),
  refreshMemory: byId('memory-refresh'),
};

function showNotice(message) {
  els.notice.textContent = message;
  els.notice.hidden = !message;
}

function reportError(err) {
  if (err instanceof AuthenticationError) {
    signOut('The API key was not accepted. Enter it again.');
    return;
  }
  showNotice(err instanceof Error ? err.message : String(err));
}

const view = new TurnView();
const recent = new RecentTurns(reportError);
const memory = new MemoryList(reportError);

let amy = null;
/** The turn on screen: its id and the controller that stops watching it. */
let watching = null;

const turnIdInFragment = () => TURN_FRAGMENT.exec(location.hash)?.[1] ?? null;

function refreshLists() {
  return Promise.all([recent.load(amy), memory.load(amy)]);
}

/** Starts with a key: checks it by listing the user's turns, then shows everything. */
async function signIn(key) {
  const client = new Amy({ apiKey: key, baseUrl: location.origin });
  await client.turns.list({ limit: 1 });
  amy = client;
  sessionStorage.setItem(KEY_STORAGE, key);
  els.keyPanel.hidden = true;
  els.workspace.hidden = false;
  els.session.hidden = false;
  els.keyHint.textContent = `Key …${key.slice(-4)}`;
  const turnId = turnIdInFragment();
  if (turnId) void openTurn(turnId);
  await refreshLists();
}

/** Forgets the key: it leaves session storage, and the page shows nothing of the user's. */
function signOut(message = '') {
  sessionStorage.removeItem(KEY_STORAGE);
  showKeyPanel(message);
}

function showKeyPanel(message) {
  watching?.controller.abort();
  watching = null;
  view.hide();
  amy = null;
  recent.clear();
  memory.clear();
  showNotice('');
  els.workspace.hidden = true;
  els.session.hidden = true;
  els.keyPanel.hidden = false;
  els.keyError.textContent = message;
  els.keyInput.value = '';
  els.keyInput.focus();
}

/** Shows a turn from its first event on, until it ends or another turn is opened. */
async function openTurn(turnId) {
  watching?.controller.abort();
  const controller = new AbortController();
  watching = { turnId, controller };
  recent.markCurrent(turnId);
  const stream = amy.turns.stream(turnId, {
    signal: controller.signal,
    onReconnect: (_lastId, info) => view.noteReconnect(info),
  });
  view.open(
    turnId,
    stream,
    (findingId) => amy.turns.findingSeries(turnId, findingId, { signal: controller.signal }),
    (answer) =>
      amy.turns.respond(turnId, answer, { signal: controller.signal }).catch((err) => {
        // The view shows why an answer was refused; a key no longer accepted signs the page out.
        if (err instanceof AuthenticationError) reportError(err);
        throw err;
      }),
  );
  els.cancel.hidden = true;
  els.reconnect.hidden = true;
  try {
    const turn = await amy.turns.get(turnId, { signal: controller.signal });
    view.showTurn(turn);
    els.cancel.hidden = turn.status === 'completed' || turn.status === 'failed';
    for await (const event of stream) {
      view.apply(event);
      if (event.type === 'turn.completed' || event.type === 'turn.failed') els.cancel.hidden = true;
    }
    view.setConnection('ended', 'Ended');
    await refreshLists();
  } catch (err) {
    if (controller.signal.aborted) return;
    if (err instanceof NotFoundError) {
      view.setConnection('ended', 'Not found');
      showNotice(`No turn ${turnId} for this key.`);
    } else if (err instanceof StreamDisconnectedError) {
      view.setConnection('offline', 'Disconnected');
      els.reconnect.hidden = false;
      window.addEventListener('online', () => watching?.turnId === turnId && void openTurn(turnId), { once: true });
    } else {
      reportError(err);
    }
  } finally {
    if (watching?.controller === controller) view.close();
  }
}

els.keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const apiKey = els.keyInput.value.trim();
  if (!apiKey) return;
  els.keyError.textContent = '';
  signIn(apiKey).catch((err) => {
    if (err instanceof AuthenticationError) signOut('That key was not accepted.');
    else showKeyPanel(`Could not reach the API: ${err.message}`);
  });
});

els.forget.addEventListener('click', () => signOut());

els.askForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const content = els.question.value.trim();
  if (!content || !amy) return;
  els.ask.disabled = true;
  showNotice('');
  try {
    const turn = await amy.turns.create({ messages: [{ role: 'user', content }], interaction: INTERACTION });
    els.question.value = '';
    // The fragment names the turn, so a reload reopens it; hashchange opens it now.
    location.hash = `turn=${turn.id}`;
    await recent.load(amy);
  } catch (err) {
    if (err instanceof ConcurrencyLimitError) {
      showNotice('You already have the maximum number of turns in flight: wait for one to finish.');
    } else {
      reportError(err);
    }
  } finally {
    els.ask.disabled = false;
  }
});

els.question.addEventListener('keydown', (event) => {
  // Enter asks, as in a chat; Shift+Enter is a new line.
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    els.askForm.requestSubmit();
  }
});

els.cancel.addEventListener('click', () => {
  if (!watching || !amy) return;
  els.cancel.disabled = true;
  amy.turns
    .cancel(watching.turnId)
    .catch(reportError)
    .finally(() => (els.cancel.disabled = false));
});

// The SDK gave up after its retries: the turn is shown again from its first event.
els.reconnect.addEventListener('click', () => watching && void openTurn(watching.turnId));

els.refreshTurns.addEventListener('click', () => recent.load(amy).catch(reportError));
els.refreshMemory.addEventListener('click', () => memory.load(amy).catch(reportError));

window.addEventListener('hashchange', () => {
  const turnId = turnIdInFragment();
  if (amy && turnId && turnId !== watching?.turnId) openTurn(turnId).catch(reportError);
});

const storedKey = sessionStorage.getItem(KEY_STORAGE);
if (storedKey) {
  signIn(storedKey).catch((err) => {
    // An API that is down for a moment does not cost the user their key: a reload tries it again.
    if (err instanceof AuthenticationError) signOut('The saved key was not accepted. Enter it again.');
    else showKeyPanel(`Could not reach the API: ${err.message}`);
  });
} else {
  showKeyPanel('');
}
