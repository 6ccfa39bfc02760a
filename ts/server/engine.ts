/**
 * What the HTTP server needs from a search engine. NodeSearch implements it; tests use a
 * small fake. Keeping the server on this interface lets it be tested with `app.request()`
 * without an index.
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

export interface SearchEngine {
  /** Current state; a server re-checks it per request while the index is not built. */
  status(): Promise<EngineStatus>;
  /** Retrieval only. Throws IndexNotBuiltError, InvalidQuestionError, ProviderError. */
  retrieve(question: string, signal: AbortSignal): Promise<RetrievalResult>;
  /** Retrieval and answer. */
  answer(question: string, signal: AbortSignal): Promise<AnswerResult>;
}
