/**
 * NodeSearch as the server's SearchEngine: the server passes an AbortSignal positionally,
 * the library takes it in an options object.
 */
import type { NodeSearch } from '../search/node-search.js';
import type { SearchEngine } from './engine.js';

export function searchEngine(search: NodeSearch): SearchEngine {
  return {
    status: () => search.status(),
    retrieve: (question, signal) => search.search(question, { signal }),
    answer: (question, signal, options) => search.answer(question, { ...options, signal }),
    answerStream: (question, signal, options) => search.answerStream(question, { ...options, signal }),
  };
}
