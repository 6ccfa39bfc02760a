/**
 * The plain result shapes of the search engine, shared by the library (`NodeSearch`), the
 * HTTP server and the web UI. They live in the search layer so the layers above import them
 * from below, never the other way round.
 */
import type { Citation, Source } from './sources.js';

export type { Citation, Source } from './sources.js';

export interface EngineStatus {
  ready: boolean;
  generation: number;
  nodes: number;
  vectors: number;
}

export interface AnswerResult {
  response: string;
  responseTokens: number;
  retrievalInfo: string;
  retrievalTokens: number;
  /** Input files of the context items, with the numbers the answer cites (./sources.ts). */
  sources?: readonly Source[];
  /** The `[n]` numbers the answer cites, resolved to their items. */
  citations?: Citation[];
}

/**
 * On a result of the search engine: its `retrievalInfo` and `sources` as the UTF-8 bytes of
 * their JSON (what `JSON.stringify` gives for each, byte for byte; `retrievalInfo` in pieces
 * to be joined in order), made while the retrieval was put together from pieces escaped and
 * encoded once per node, so that the HTTP server does not serialise and encode them again
 * for every question (escaping a 4–10 KB context, then encoding the reply, were a measurable
 * share of a request). A symbol key: the result's fields, keys and JSON stay what they were.
 */
export const RESULT_JSON: unique symbol = Symbol('noderag.resultJson');

export interface ResultJson {
  retrievalInfo: readonly Uint8Array[];
  sources: Uint8Array;
}

export interface RetrievalResult {
  retrievalInfo: string;
  retrievalTokens: number;
  /** Input files of the context items (`cited` empty). */
  sources?: readonly Source[];
  /** `retrievalInfo` and `sources` already serialised (see RESULT_JSON). */
  [RESULT_JSON]?: ResultJson;
}

/** Options of an answer beyond the question. */
export interface AnswerOptions {
  /** Earlier turns of a conversation, oldest first, passed to the model before the question. */
  history?: { role: 'user' | 'assistant'; content: string }[];
}

/**
 * What a streamed answer yields: the answer's text deltas as the model writes them, then one
 * `done` with the whole result (the answer, its sources and citations, the token counts).
 */
export type AnswerEvent<R extends AnswerResult = AnswerResult> =
  | { type: 'delta'; text: string }
  | { type: 'done'; result: R };
