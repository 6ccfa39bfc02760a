/**
 * Server-sent events for `"stream": true` (issue 16 item 2): `POST /answer` and
 * `POST /v1/chat/completions`.
 *
 * The answer is streamed as the provider writes it (SearchEngine.answerStream): the reply
 * starts when the first delta has arrived, so every error up to then (the question, the
 * retrieval, the model's first attempt and its retries) keeps its JSON reply and status. An
 * error after it is sent as a last event (`format.error`) and ends the stream. The request's
 * AbortSignal stays live for the whole stream: a client that disconnects, or the request
 * deadline, aborts the provider's request. An engine without `answerStream` is asked for the
 * whole answer, sent in word pieces.
 */
import type { Context } from 'hono';
import { textPieces } from '../llm/text-pieces.js';
import type { AnswerEvent, AnswerOptions, AnswerResult, SearchEngine } from './engine.js';
import { type ErrorReply, HttpError, statusFor, withRequestSignal } from './http.js';
import { type StreamOutcome, streamEnd } from './observe.js';

/** How one API writes a streamed answer: the events (JSON values or raw strings) of each step. */
export interface SseFormat {
  /** Before the first delta. */
  start?: () => unknown[];
  delta: (text: string) => unknown[];
  /** The end: the whole result, with its sources. */
  done: (result: AnswerResult) => unknown[];
  /** A failure after the reply has started. */
  error: (error: Omit<ErrorReply, 'status'>) => unknown[];
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
};

/**
 * JSON for an event's `data:` field, with U+2028 and U+2029 escaped. JSON allows them raw and
 * SSE ends lines only at CR and LF, but clients that split lines with a JavaScript `.` or
 * multiline `$` take them for line ends and cut the event there (a file name holding one
 * broke the web UI's build log and the CLI's streamed answers).
 */
export function eventJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** One `data:` event per value: JSON, or a raw string (`[DONE]`). */
function encodeEvents(events: readonly unknown[]): string {
  return events.map((e) => `data: ${typeof e === 'string' ? e : eventJson(e)}\n\n`).join('');
}

/**
 * `POST /answer`: `{"type": "delta", "text"}` per delta, then `{"type": "done", "answer",
 * "sources", "citations", "responseTokens", "retrievalTokens"}`, or `{"type": "error",
 * "error": {"code", "message"}}` when the answer fails after it has started.
 */
export const ANSWER_EVENTS: SseFormat = {
  delta: (text) => [{ type: 'delta', text }],
  done: (r) => [
    {
      type: 'done',
      answer: r.response,
      sources: r.sources ?? [],
      citations: r.citations ?? [],
      responseTokens: r.responseTokens,
      retrievalTokens: r.retrievalTokens,
    },
  ],
  error: (error) => [{ type: 'error', error }],
};

/** The engine's streamed answer, or its whole answer in word pieces when it cannot stream. */
async function* answerEvents(
  engine: SearchEngine,
  question: string,
  signal: AbortSignal,
  options: AnswerOptions,
): AsyncGenerator<AnswerEvent, void, undefined> {
  if (engine.answerStream) {
    yield* engine.answerStream(question, signal, options);
    return;
  }
  const result = await engine.answer(question, signal, options);
  for (const text of textPieces(result.response)) yield { type: 'delta', text };
  yield { type: 'done', result };
}

/**
 * Streams an answer as server-sent events in `format`. Resolves to the reply once the first
 * event is there; rejects (JSON error reply) when the answer fails before it.
 */
export function streamAnswer(
  c: Context,
  request: { engine: SearchEngine; question: string; options?: AnswerOptions; timeoutMs: number },
  format: SseFormat,
  logError: (e: unknown) => void,
): Promise<Response> {
  const { engine, question, options = {}, timeoutMs } = request;
  const ended = streamEnd(c);
  return new Promise<Response>((resolve, reject) => {
    let replied = false;
    // The signal lives until `finished`: withRequestSignal aborts it on disconnect or deadline.
    const running = withRequestSignal(
      c,
      (signal) =>
        new Promise<void>((finished, failed) => {
          const events = answerEvents(engine, question, signal, options);
          events.next().then((first) => {
            replied = true;
            resolve(eventStream(first, events, format, logError, finished, ended));
          }, failed);
        }),
      timeoutMs,
    );
    running.catch((e: unknown) => {
      // After the reply has started the stream itself reports the failure.
      if (!replied) reject(e);
    });
  });
}

function eventStream(
  first: IteratorResult<AnswerEvent, void>,
  events: AsyncGenerator<AnswerEvent, void, undefined>,
  format: SseFormat,
  logError: (e: unknown) => void,
  finished: () => void,
  ended: (outcome: StreamOutcome) => void,
): Response {
  const encoder = new TextEncoder();
  /** What the access log says of the stream when it ends: the result's token counts. */
  const outcome: StreamOutcome = {};
  const end = (error?: string) => {
    if (error !== undefined) outcome.error = error;
    finished();
    ended(outcome);
  };
  const encode = (event: AnswerEvent): Uint8Array => {
    if (event.type === 'delta') return encoder.encode(encodeEvents(format.delta(event.text)));
    outcome.retrievalTokens = event.result.retrievalTokens;
    outcome.answerTokens = event.result.responseTokens;
    return encoder.encode(encodeEvents(format.done(event.result)));
  };
  const body = new ReadableStream<Uint8Array>({
    start(ctl) {
      if (format.start) ctl.enqueue(encoder.encode(encodeEvents(format.start())));
      if (first.done) {
        ctl.close();
        end();
      } else ctl.enqueue(encode(first.value));
    },
    async pull(ctl) {
      try {
        const r = await events.next();
        if (r.done) {
          ctl.close();
          end();
          return;
        }
        ctl.enqueue(encode(r.value));
      } catch (e) {
        const { status, ...error } = statusFor(e);
        if (status === 500) logError(e);
        ctl.enqueue(encoder.encode(encodeEvents(format.error(error))));
        ctl.close();
        end(error.code);
      }
    },
    async cancel() {
      // The client has gone: stop reading (withRequestSignal has aborted the provider).
      end('client_closed');
      await events.return(undefined).catch(() => {});
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** The `stream` field: absent or a boolean. */
export function streamFlag(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    throw new HttpError(
      400,
      'invalid_stream',
      `"stream" must be true or false, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
