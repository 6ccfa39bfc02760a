/**
 * The model calls the search server makes, counted (issue 16 item 5): the providers a
 * NodeSearch uses are wrapped so each call adds to `noderag_provider_calls_total` and
 * `noderag_provider_tokens_total` by task (`query`, `answer`, `embed_query`) and provider, and
 * marks the request it belongs to (./observe.ts: the access log's `cache_hit` is a retrieval
 * that made no `query` call). Tokens are those of the text sent (the task's inputs, not the
 * prompt's fixed instructions) and received, counted with the engine's token counter: the
 * same for every provider, not the provider's own billing.
 */
import type { TokenCounter } from '../llm/token-cap.js';
import type { SearchProviders } from '../search/node-search.js';
import { noteProviderCall, type ServerMetrics } from './observe.js';

type Task = 'query' | 'answer' | 'embed_query';

export interface ProviderNames {
  /** model_config's provider (tasks query and answer). */
  chat: string;
  /** embedding_config's provider. */
  embedding: string;
}

/** The text of a task's input, as far as it is counted (`answer`: context, question, turns). */
function inputText(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const o = input as { context?: unknown; question?: unknown; history?: { content?: unknown }[] };
  const parts = [o.context, o.question, ...(o.history ?? []).map((t) => t.content)];
  return parts.filter((p): p is string => typeof p === 'string').join('\n');
}

function outputText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output ?? '');
}

/**
 * `providers` with `run`, `stream` and `embedQuery` counted; every other member is the
 * original's (bound to it, so its private fields keep working).
 */
export function countedProviders<P extends SearchProviders>(
  providers: P,
  o: { names: ProviderNames; tokens: TokenCounter; metrics?: ServerMetrics },
): P {
  const count = (text: string) => (text === '' ? 0 : o.tokens.countTokens(text));
  // The texts are made and counted only for the metrics (an access log alone needs the call).
  const record = (task: Task, sent: () => string, received: () => string) => {
    noteProviderCall(task);
    const m = o.metrics;
    if (!m) return;
    const provider = task === 'embed_query' ? o.names.embedding : o.names.chat;
    m.providerCalls.inc({ task, provider });
    m.providerTokens.inc({ task, provider, direction: 'input' }, count(sent()));
    const text = received();
    if (text !== '') m.providerTokens.inc({ task, provider, direction: 'output' }, count(text));
  };
  // A failed call counts too, with no output tokens: it was made, and may have been billed.
  const run: SearchProviders['run'] = async (task, input, call) => {
    let received: () => string = () => '';
    try {
      const out = await providers.run(task, input, call);
      received = () => outputText(out);
      return out;
    } finally {
      record(task as Task, () => inputText(input), received);
    }
  };
  const embedQuery: SearchProviders['embedQuery'] = async (question, call) => {
    try {
      return await providers.embedQuery(question, call);
    } finally {
      record(
        'embed_query',
        () => question,
        () => '',
      );
    }
  };
  const stream: SearchProviders['stream'] = providers.stream
    ? async function* (task, input, call) {
        let text = '';
        try {
          for await (const delta of providers.stream!(task, input, call)) {
            text += delta;
            yield delta;
          }
        } finally {
          record(
            task as Task,
            () => inputText(input),
            () => text,
          );
        }
      }
    : undefined;
  const own: Record<PropertyKey, unknown> = { run, embedQuery, stream };
  return new Proxy(providers, {
    get(target, prop) {
      if (prop in own) return own[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
