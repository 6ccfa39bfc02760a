/**
 * The OpenAI-compatible endpoint (issue 16 item 3), so the official `openai` SDK and chat
 * front-ends can use the index unchanged:
 *
 * - `GET /v1/models` lists one model, the index (`modelName`); `GET /v1/models/{id}` shows it.
 * - `POST /v1/chat/completions` answers the last `user` message with retrieval on the index;
 *   the `user`/`assistant` turns before it are passed to the model as the conversation
 *   (client `system`/`developer` messages are not: the answer prompt is ours). The reply is a
 *   `chat.completion` whose text ends with the numbered source list, with the structured
 *   `sources` and `citations` (as `/answer` gives them) as extra top-level fields. With
 *   `"stream": true` the same as `chat.completion.chunk` events (./stream.ts): the answer's
 *   deltas as the model writes them, the source list, a last chunk with `finish_reason: "stop"` and the extra fields,
 *   the usage chunk when `stream_options.include_usage`, then `[DONE]`.
 *
 * Errors keep the server's `{"error": {"code", "message"}}` shape, which the SDK reads.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { validateQuestion } from '../search/question.js';
import { sourceList } from '../search/sources.js';
import type { AnswerOptions, AnswerResult, SearchEngine } from './engine.js';
import { HttpError, readJsonObject, withRequestSignal } from './http.js';
import { noteFacts } from './observe.js';
import { type SseFormat, streamAnswer, streamFlag } from './stream.js';

export interface OpenAiDeps {
  engine: SearchEngine;
  /** The model name the index is served as. */
  modelName: string;
  timeoutMs: number;
  /** Where unexpected errors of a stream already started are reported. */
  logError: (e: unknown) => void;
}

/** How many earlier turns are passed on at most (the most recent ones). */
export const MAX_HISTORY_TURNS = 20;
const MAX_MESSAGES = 200;
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

export interface ChatTurn {
  role: string;
  content: string;
}

function bad(path: string, message: string): HttpError {
  return new HttpError(400, 'invalid_messages', `${path}: ${message}`);
}

/**
 * The text of a message's content: a string, or an array of parts. The message being
 * answered must be text only (`strict`); an earlier turn keeps its text and refusal parts and
 * drops the others (an image, a file): chat front-ends send the whole conversation again
 * each turn, and one image early on must not make every later question fail.
 */
function textOf(content: unknown, path: string, strict: boolean): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content
      .flatMap((part, i) => {
        const p = part as { type?: unknown; text?: unknown; refusal?: unknown };
        if (typeof part === 'object' && part !== null && p.type === 'text' && typeof p.text === 'string') {
          return [p.text];
        }
        if (!strict) {
          const isObject = typeof part === 'object' && part !== null;
          return isObject && p.type === 'refusal' && typeof p.refusal === 'string' ? [p.refusal] : [];
        }
        throw bad(`${path}[${i}]`, 'only {"type": "text", "text": string} content parts are supported');
      })
      .join('\n');
  }
  throw bad(path, 'must be a string or an array of text parts');
}

/** Checks `messages` and splits them into the question and the earlier conversation. */
export function questionAndHistory(messages: unknown): {
  question: string;
  history: NonNullable<AnswerOptions['history']>;
} {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw bad('messages', 'must be a non-empty array of {role, content}');
  }
  if (messages.length > MAX_MESSAGES) throw bad('messages', `at most ${MAX_MESSAGES} messages`);
  const roles = messages.map((m, i): string => {
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      throw bad(`messages[${i}]`, 'must be an object');
    const { role } = m as { role?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw bad(`messages[${i}].role`, `must be one of ${[...ROLES].join(', ')}`);
    }
    return role;
  });
  const last = roles.lastIndexOf('user');
  const turns = messages.map(
    (m, i): ChatTurn => ({
      role: roles[i]!,
      content: textOf((m as { content?: unknown }).content, `messages[${i}].content`, i === last),
    }),
  );
  if (last < 0) throw new HttpError(400, 'missing_question', 'messages: no "user" message to answer');
  const question = validateQuestion(turns[last]!.content, `messages[${last}].content`);
  const history = turns
    .slice(0, last)
    .flatMap((t) => {
      if ((t.role !== 'user' && t.role !== 'assistant') || t.content.trim() === '') return [];
      const role: 'user' | 'assistant' = t.role;
      return [{ role, content: t.content }];
    })
    .slice(-MAX_HISTORY_TURNS);
  return { question, history };
}

export function openAiRoutes(deps: OpenAiDeps): Hono {
  const { engine, modelName, timeoutMs, logError } = deps;
  const created = Math.floor(Date.now() / 1000);
  const model = { id: modelName, object: 'model', created, owned_by: 'noderag' };
  const app = new Hono();

  app.get('/models', (c) => c.json({ object: 'list', data: [model] }));
  app.get('/models/:id{.+}', (c) => {
    if (c.req.param('id') !== modelName) throw modelNotFound(c.req.param('id'), modelName);
    return c.json(model);
  });

  app.post('/chat/completions', async (c) => {
    const body = await readJsonObject(c);
    // Like every optional field, a null model is one left out.
    if (body.model !== undefined && body.model !== null && body.model !== modelName) {
      throw modelNotFound(String(body.model), modelName);
    }
    const stream = streamFlag(body.stream);
    const includeUsage = usageRequested(body.stream_options, stream);
    if (body.n !== undefined && body.n !== null && body.n !== 1) {
      throw new HttpError(400, 'invalid_n', '"n" must be 1');
    }
    const { question, history } = questionAndHistory(body.messages);
    const options: AnswerOptions = history.length > 0 ? { history } : {};
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    if (stream) {
      return streamAnswer(
        c,
        { engine, question, options, timeoutMs },
        chunkFormat({ id, created, model: modelName, includeUsage }),
        logError,
      );
    }
    const r = await withRequestSignal(c, (signal) => engine.answer(question, signal, options), timeoutMs);
    noteFacts(c, { retrievalTokens: () => r.retrievalTokens, answerTokens: () => r.responseTokens });
    const sources = r.sources ?? [];
    const citations = r.citations ?? [];
    return c.json({
      id,
      object: 'chat.completion',
      created,
      model: modelName,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: r.response + sourceTail(r) },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: usageOf(r),
      sources,
      citations,
    });
  });

  return app;
}

/** The numbered source list appended to the answer's text (empty when nothing is cited). */
function sourceTail(r: AnswerResult): string {
  const list = sourceList(r.sources ?? [], r.citations ?? []);
  return list === '' ? '' : `\n\nSources:\n${list}`;
}

function usageOf(r: AnswerResult) {
  return {
    prompt_tokens: r.retrievalTokens,
    completion_tokens: r.responseTokens,
    total_tokens: r.retrievalTokens + r.responseTokens,
  };
}

/**
 * The streamed reply as `chat.completion.chunk` events: the role, one chunk per delta, the
 * source list, a `finish_reason: "stop"` chunk with `sources` and `citations`, the usage
 * chunk when asked, `[DONE]`. A failure after the start is an `{"error": …}` event, which the
 * openai SDK throws as an APIError.
 */
function chunkFormat(m: { id: string; created: number; model: string; includeUsage: boolean }): SseFormat {
  const base = { id: m.id, object: 'chat.completion.chunk', created: m.created, model: m.model };
  const chunk = (delta: Record<string, string>, finish: string | null, extra: object = {}) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...extra,
  });
  return {
    start: () => [chunk({ role: 'assistant', content: '' }, null)],
    delta: (content) => [chunk({ content }, null)],
    done: (r) => {
      const tail = sourceTail(r);
      return [
        ...(tail === '' ? [] : [chunk({ content: tail }, null)]),
        chunk({}, 'stop', { sources: r.sources ?? [], citations: r.citations ?? [] }),
        ...(m.includeUsage ? [{ ...base, choices: [], usage: usageOf(r) }] : []),
        '[DONE]',
      ];
    },
    error: (error) => [{ error }],
  };
}

/**
 * `stream_options.include_usage`: a last chunk with the usage and no choices. As OpenAI
 * does, the options must be an object, and are refused on a request that does not stream.
 */
function usageRequested(options: unknown, stream: boolean): boolean {
  if (options === undefined || options === null) return false;
  if (!stream) {
    throw new HttpError(
      400,
      'invalid_stream_options',
      '"stream_options" is only allowed with "stream": true',
    );
  }
  const include = (options as { include_usage?: unknown }).include_usage;
  if (
    typeof options !== 'object' ||
    Array.isArray(options) ||
    (include !== undefined && typeof include !== 'boolean')
  ) {
    throw new HttpError(400, 'invalid_stream_options', '"stream_options" must be {"include_usage": boolean}');
  }
  return include === true;
}

function modelNotFound(asked: string, modelName: string): HttpError {
  return new HttpError(404, 'model_not_found', `no model "${asked}" here; this server serves "${modelName}"`);
}
