/**
 * `@amy/sdk`: the TypeScript client of Amy's turn service. Runs on `fetch`, WHATWG streams and
 * `AbortSignal` alone, so the same code works in Node ≥ 20, browsers, Deno and Bun.
 */
export { Amy, DEFAULT_BASE_URL, type AmyOptions } from './client';
export * from './core/errors';
export type { RequestOptions, FetchLike } from './core/http';
export type {
  TurnCreateParams,
  TurnCreateOptions,
  TurnListParams,
  TurnInteraction,
  TurnInputAnswer,
  TurnRespondOptions,
} from './resources/turns';
export type { MemoryListParams, MemoryCreateParams } from './resources/memory';
export type {
  DailySummaryInput,
  WorkoutInput,
  DailyListParams,
  WorkoutListParams,
  LabResultInput,
  LabListParams,
  LabDeleteParams,
} from './resources/data';
export { Page, PagePromise } from './core/pagination';
export { TurnStream, type TurnStreamOptions, type ReconnectInfo } from './streaming/turn-stream';
export type { EventSourceConstructor, EventSourceLike, EventSourceEvent } from './streaming/transport';
export type {
  TurnStreamEvent,
  KnownTurnEvent,
  UnknownTurnEvent,
  TurnEventOf,
  TurnCompletedEvent,
  TurnFailedEvent,
  TurnInputRequiredEvent,
  TurnInputReceivedEvent,
  TurnEventType,
} from './events';
export { LineDecoder } from './streaming/line-decoder';
export { SseDecoder, type SseMessage } from './streaming/sse-decoder';
export type {
  Turn,
  TurnResult,
  Message,
  TurnContext,
  FactEntry,
  PersonalAnchorEntry,
  FactCheckOutcome,
  TurnProgress,
} from '../../contracts/turn';
export type { InputKind, InputOption, InputRequest, InputReceived } from '../../contracts/interaction';
export type { Memory } from '../../contracts/memory';
export type { FindingSeriesResponse } from '../../contracts/finding-series';
export type {
  DailySummary,
  Workout,
  LabResult,
  FhirBundle,
  Profile,
  UpsertResult,
  TerraConnection,
  TerraConnectionStatus,
} from '../../contracts/data';
export type { ErrorBody } from '../../contracts/errors';
export type { AccountDeletion } from '../../contracts/account';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks';
export type {
  WebhookEvent,
  WebhookEventOf,
  WebhookEventType,
  TurnEndedWebhookData,
  MemoryCreatedWebhookData,
  AccountDeletedWebhookData,
  DataUpdatedWebhookData,
  DataConnectionChangedWebhookData,
} from '../../contracts/webhooks';
export { STREAM_AGENTS, STREAM_AGENT_LABELS, type StreamAgent } from '../../contracts/event-catalog';
export { GATE_NAMES, GATE_LABELS, type GateName } from '../../contracts/gate-names';
export { FACT_TOLERANCE, withinTolerance } from '../../contracts/fact-tolerance';
