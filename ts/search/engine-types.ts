/**
 * The plain result shapes of the search engine, shared by the library (`NodeSearch`), the
 * HTTP server and the web UI. They live in the search layer so the layers above import them
 * from below, never the other way round.
 */
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
}

export interface RetrievalResult {
  retrievalInfo: string;
  retrievalTokens: number;
}
