/**
 * The failure converter of every Temporal client, worker and workflow bundle of the service: Temporal's
 * default, with `encodeCommonAttributes` on. A failure's message and stack trace are moved into a payload
 * (`encodedAttributes`) that the payload codec encrypts with the rest (./encryption-codec.ts), and the
 * history keeps only "Encoded failure": an error message can quote what it failed on, and a stack trace
 * names files, so neither is left readable outside the service. Workflow code, the API and the codec
 * server (for the Web UI) see the original text, decoded.
 *
 * Loaded by path (`failureConverterPath`), since a workflow bundle must carry the same converter as the
 * worker that runs it: kept free of Node built-ins, as workflow code is.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
