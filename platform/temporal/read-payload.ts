/**
 * A value read from a workflow history's payload the way the service wrote it: through the client's codec
 * (a turn's payloads are encrypted, ./encryption-codec.ts), then its payload converter. For code that reads
 * histories itself (the finding series route, `turn:retry`), where the SDK does not decode for it.
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';

export async function readPayload<T>(client: Client, payload: Payload): Promise<T> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  let decoded = [payload];
  // Codecs decode in the reverse of the order they encode in.
  for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return payloadConverter.fromPayload<T>(decoded[0]);
}
