/**
 * Asking back through `@amy/sdk` against the real service (docs/sdk.md#asking-back): a vague question created
 * with `interaction` asks for a confirmation, which arrives as a typed `turn.input_required` on the stream;
 * `amy.turns.respond` answers it, a second answer is an `InputAlreadyReceivedError`, and the stream goes on to
 * `turn.input_received` and the turn's answer.
 */
import {
  Amy,
  InputAlreadyReceivedError,
  InputNotRequestedError,
  NotFoundError,
  type InputReceived,
  type TurnInputRequiredEvent,
} from '@amy/sdk';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let amy: Amy;
let other: Amy;

beforeAll(async () => {
  svc = await startTestService();
  amy = new Amy({ apiKey: (await svc.createUser('alice')).apiKey, baseUrl: svc.url });
  other = new Amy({ apiKey: (await svc.createUser('bob')).apiKey, baseUrl: svc.url });
});
afterAll(async () => {
  await svc?.close();
});

const VAGUE = 'Is there anything in my numbers worth knowing?';

test('the confirmation is an event on the stream; respond() answers it once and the turn completes', async () => {
  const turn = await amy.turns.create({
    messages: [{ role: 'user', content: VAGUE }],
    interaction: { accepts: ['confirmation'] },
  });
  const stream = amy.turns.stream(turn.id);
  let asked: TurnInputRequiredEvent | undefined;
  let receipt: InputReceived | undefined;
  const types: string[] = [];
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'turn.input_required') {
      asked = event;
      expect(event).toMatchObject({ kind: 'confirmation', default_option_id: 'quick', free_text: false });
      expect(event.options.map((o) => o.id)).toEqual(['scan', 'quick']);
      expect(event.estimate).toEqual({ cost_usd: expect.any(Number), duration_seconds: expect.any(Number) });
      expect((await amy.turns.get(turn.id)).status).toBe('waiting_for_input');
      await expect(other.turns.respond(turn.id, { request_id: event.request_id, option_id: 'scan' })).rejects.toThrow(
        NotFoundError,
      );
      await expect(amy.turns.respond(turn.id, { request_id: 'inq_other', option_id: 'scan' })).rejects.toThrow(
        InputNotRequestedError,
      );
      receipt = await amy.turns.respond(turn.id, { request_id: event.request_id, option_id: 'scan' });
      expect(receipt).toMatchObject({ request_id: event.request_id, option_id: 'scan', source: 'user' });
      await expect(
        amy.turns.respond(turn.id, { request_id: event.request_id, option_id: 'quick' }),
      ).rejects.toBeInstanceOf(InputAlreadyReceivedError);
    }
    if (event.type === 'turn.input_received') {
      expect(event).toMatchObject({ ...receipt, turn_id: turn.id });
    }
  }
  expect(asked).toBeDefined();
  expect(types.filter((t) => t.startsWith('turn.input'))).toEqual(['turn.input_required', 'turn.input_received']);
  expect((await stream.finalResult()).answer.length).toBeGreaterThan(0);
  expect(types).toContain('agent.started');
});
