/**
 * What the HTTP server needs from a search engine. NodeSearch implements it; tests use a
 * small fake. Keeping the server on this interface lets it be tested with `app.request()`
 * without an index.
 */
import type {
  AnswerEvent,
  AnswerOptions,
  AnswerResult,
  EngineStatus,
  RetrievalResult,
} from '../search/engine-types.js';

export type { AnswerEvent, AnswerOptions, AnswerResult, EngineStatus, RetrievalResult };

export interface SearchEngine {
  /** Current state; a server re-checks it per request while the index is not built. */
  status(): Promise<EngineStatus>;
  /** Retrieval only. Throws IndexNotBuiltError, InvalidQuestionError, ProviderError. */
  retrieve(question: string, signal: AbortSignal): Promise<RetrievalResult>;
  /** Retrieval and answer; `options.history` holds earlier turns of a conversation. */
  answer(question: string, signal: AbortSignal, options?: AnswerOptions): Promise<AnswerResult>;
  /**
   * The answer as the model writes it: deltas, then `done` with what `answer` returns. Errors
   * before the first delta are thrown by the first step. Optional: without it a streamed reply
   * is `answer`'s text sent in word pieces once it is whole.
   */
  answerStream?(question: string, signal: AbortSignal, options?: AnswerOptions): AsyncIterable<AnswerEvent>;
}
