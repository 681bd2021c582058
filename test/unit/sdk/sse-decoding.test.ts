/**
 * The wire layers of the SDK's stream (bytes → lines → SSE messages), checked against a recorded
 * transcript split at every byte boundary: whatever the network's chunking, the same events come out.
 */
import { LineDecoder, SseDecoder, type SseMessage } from '@amy/sdk';

/**
 * A sample transcript (docs/streaming.md#a-transcript), with non-ASCII text so that splits land inside UTF-8
 * characters.
 */
const TRANSCRIPT = [
  'id: 1',
  'event: turn.started',
  'data: {"turn_id":"turn_01HX2K3M4N5P6Q7R8S9T0V1W2X","at":"2026-05-25T10:00:00.123Z"}',
  '',
  'id: 2',
  'event: agent.started',
  'data: {"agent":"data_science","at":"2026-05-25T10:00:04.500Z","question":"Compute average resting heart rate"}',
  '',
  'id: 3',
  'event: agent.thought',
  'data: {"agent":"data_science","delta":"Looking at — ρ≈0.41 😴 ","attempt":1,"step":"ds_run"}',
  '',
  'id: 4',
  'event: validator.critic',
  'data: {"finding_id":"ds-001","verdict":"accept","reasoning":"Descriptive summary, not causal.","concerns":[]}',
  '',
  'id: 5',
  'event: turn.completed',
  'data: {"turn_id":"turn_01HX2K3M4N5P6Q7R8S9T0V1W2X","result":{"answer":"Your average is 60.39 bpm — steady."}}',
  '',
];

const utf8 = (text: string) => new TextEncoder().encode(text);

function decode(chunks: Uint8Array[]): SseMessage[] {
  const lines = new LineDecoder();
  const sse = new SseDecoder();
  const out: SseMessage[] = [];
  for (const chunk of chunks) {
    for (const line of lines.push(chunk)) {
      const message = sse.line(line);
      if (message) out.push(message);
    }
  }
  lines.end();
  return out;
}

const expected = decode([utf8(TRANSCRIPT.join('\n') + '\n')]);

test('the transcript decodes into its five events', () => {
  expect(expected.map((m) => [m.id, m.event])).toEqual([
    ['1', 'turn.started'],
    ['2', 'agent.started'],
    ['3', 'agent.thought'],
    ['4', 'validator.critic'],
    ['5', 'turn.completed'],
  ]);
  expect(JSON.parse(expected[2].data).delta).toBe('Looking at — ρ≈0.41 😴 ');
});

describe.each([
  ['LF', '\n'],
  ['CRLF', '\r\n'],
  ['CR', '\r'],
])('with %s line endings', (_name, eol) => {
  const bytes = utf8(TRANSCRIPT.join(eol) + eol);

  test('split into two chunks at every byte boundary, the same events come out', () => {
    for (let i = 0; i <= bytes.length; i++) {
      expect(decode([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(expected);
    }
  });

  test('one byte at a time, the same events come out', () => {
    expect(decode([...bytes].map((b) => Uint8Array.of(b)))).toEqual(expected);
  });
});

test('a leading byte order mark is dropped, even when split from the rest', () => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(TRANSCRIPT.join('\n') + '\n')]);
  expect(decode([bytes])).toEqual(expected);
  expect(decode([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])).toEqual(expected);
});

test('multi-line data joins with newlines; comments, unknown fields and a single leading space are handled', () => {
  const text = [
    ': a comment',
    'retry: 2500',
    'id: 7',
    'event: custom',
    'data:first',
    'data:  second',
    'x-unknown: 1',
    '',
    '',
  ];
  expect(decode([utf8(text.join('\n'))])).toEqual([
    { id: '7', event: 'custom', data: 'first\n second', retryMs: 2500 },
  ]);
});

test('a block without data dispatches nothing, and the last id carries over to later events', () => {
  const text = ['id: 9', '', 'data: {}', '', 'event: x', '', ''];
  expect(decode([utf8(text.join('\n'))])).toEqual([{ id: '9', event: 'message', data: '{}' }]);
});

test('an event cut off before its blank line is never dispatched (a dropped connection yields no half event)', () => {
  const whole = utf8(TRANSCRIPT.join('\n') + '\n');
  // Cut anywhere inside the last event: only the four complete ones come out.
  const lastStart = utf8(TRANSCRIPT.slice(0, 16).join('\n') + '\n').length;
  for (let cut = lastStart; cut < whole.length; cut++) {
    expect(decode([whole.subarray(0, cut)]).map((m) => m.id)).toEqual(['1', '2', '3', '4']);
  }
});
