/**
 * The HTTP API as a Hono app factory (no listening here; see serve.ts). Routes and error
 * bodies follow docs/method.md §7.2: every error is `{"error": {"code", "message"}}`, mapped
 * from error codes to statuses in one place (`statusFor`).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { NodeRagError, ProviderError } from '../errors.js';
import { jsonType, validateQuestion } from '../search/question.js';
import type { SearchEngine } from './engine.js';

export const MAX_BODY_BYTES = 64 * 1024;

export interface AppDeps {
  engine: SearchEngine;
  /** Per-request deadline in milliseconds (default 300 s). */
  requestTimeoutMs?: number;
  /** Where unexpected errors are reported (default console.error). */
  logError?: (e: unknown) => void;
}

const ROUTES: Record<string, string[]> = {
  '/answer': ['POST'],
  '/retrieval': ['POST'],
  '/answer_retrieval': ['POST'],
  '/health': ['GET', 'HEAD'],
};

class HttpError extends NodeRagError {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(code, message);
    this.status = status;
    this.headers = headers;
  }
}

/** The one mapping from error codes to HTTP statuses. */
export function statusFor(e: unknown): { status: number; code: string; message: string } {
  if (e instanceof HttpError) return { status: e.status, code: e.code, message: e.message };
  if (e instanceof ProviderError) {
    const timeout = e.code === 'upstream_timeout';
    return {
      status: timeout ? 504 : 502,
      code: timeout ? 'upstream_timeout' : 'upstream_error',
      message: e.message,
    };
  }
  if (e instanceof NodeRagError) {
    switch (e.code) {
      case 'index_not_built':
        return { status: 503, code: e.code, message: e.message };
      case 'missing_question':
      case 'invalid_question':
      case 'empty_question':
      case 'question_too_long':
        return { status: 400, code: e.code, message: e.message };
      case 'request_timeout':
        return { status: 504, code: e.code, message: e.message };
    }
  }
  return { status: 500, code: 'internal_error', message: 'internal error; see the server log' };
}

/** What @hono/node-server passes as `c.env`: the raw Node request and response. */
interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

function nodeBindings(c: Context): NodeBindings {
  return (c.env ?? {}) as NodeBindings;
}

async function readQuestion(c: Context): Promise<string> {
  const type = c.req.header('content-type') ?? '';
  const mime = type.split(';')[0]!.trim().toLowerCase();
  if (mime !== 'application/json' && !mime.endsWith('+json')) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be application/json, got "${type || 'none'}"`,
    );
  }
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  // Under Node, read the IncomingMessage itself: going through the web Request's body
  // stream costs more than the rest of a cached request (measured: bench/RESULTS.md ## server).
  const { incoming } = nodeBindings(c);
  const text = incoming ? await readIncoming(incoming) : await readWebBody(c.req.raw.body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'the body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, 'invalid_body', `the body must be a JSON object, got ${jsonType(parsed)}`);
  }
  return validateQuestion((parsed as Record<string, unknown>).question);
}

/** At most MAX_BODY_BYTES of a Node request body, whatever Content-Length claims (chunked bodies). */
function readIncoming(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (e?: Error) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', done);
      incoming.off('aborted', onAborted);
      if (e) reject(e);
      else resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        incoming.pause();
        done(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done();
    const onAborted = () => done(new Error('client disconnected'));
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('error', done);
    incoming.once('aborted', onAborted);
  });
}

/** The same limit over a web ReadableStream (app.request() in tests, other runtimes). */
async function readWebBody(body: ReadableStream<Uint8Array> | null): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(): HttpError {
  return new HttpError(413, 'payload_too_large', `the body is larger than ${MAX_BODY_BYTES / 1024} KiB`);
}

/**
 * Runs `work` with an AbortSignal that fires on client disconnect or the request deadline.
 * Under Node the disconnect is the response's 'close' before it finished (cheaper than the
 * web Request's signal, which the adapter would have to create for every request).
 */
async function withDeadline<T>(
  c: Context,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onClientGone = () =>
    controller.abort(new HttpError(499, 'client_closed_request', 'client disconnected before the reply'));
  const { outgoing } = nodeBindings(c);
  const onClose = () => {
    if (!outgoing?.writableFinished) onClientGone();
  };
  const clientSignal = outgoing ? undefined : c.req.raw.signal;
  if (outgoing) outgoing.once('close', onClose);
  else clientSignal?.addEventListener('abort', onClientGone, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new HttpError(
        504,
        'request_timeout',
        `the request took longer than ${Math.round(ms / 1000)} s`,
      );
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
    outgoing?.off('close', onClose);
    clientSignal?.removeEventListener('abort', onClientGone);
  }
}

export function createApp(deps: AppDeps): Hono {
  const { engine } = deps;
  const timeoutMs = deps.requestTimeoutMs ?? 300_000;
  const logError = deps.logError ?? ((e: unknown) => console.error(e));
  const app = new Hono();

  app.onError((e, c) => {
    const { status, code, message } = statusFor(e);
    if (status === 500) logError(e);
    const headers = e instanceof HttpError ? e.headers : {};
    return c.json({ error: { code, message } }, status as 500, headers);
  });

  app.notFound((c) => {
    const allowed = ROUTES[c.req.path];
    if (allowed) {
      throw new HttpError(
        405,
        'method_not_allowed',
        `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(', ')}`,
        {
          Allow: allowed.join(', '),
        },
      );
    }
    throw new HttpError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`);
  });

  app.get('/health', async (c) => {
    const s = await engine.status();
    return c.json({
      status: 'ok',
      index: s.ready ? 'ready' : 'not_built',
      generation: s.generation,
      nodes: s.nodes,
      vectors: s.vectors,
    });
  });

  app.post('/answer', async (c) => {
    const q = await readQuestion(c);
    const r = await withDeadline(c, timeoutMs, (signal) => engine.answer(q, signal));
    return c.json({ answer: r.response });
  });

  app.post('/retrieval', async (c) => {
    const q = await readQuestion(c);
    const r = await withDeadline(c, timeoutMs, (signal) => engine.retrieve(q, signal));
    return c.json({ retrieval: r.retrievalInfo });
  });

  app.post('/answer_retrieval', async (c) => {
    const q = await readQuestion(c);
    const r = await withDeadline(c, timeoutMs, (signal) => engine.answer(q, signal));
    return c.json({ answer: r.response, retrieval: r.retrievalInfo });
  });

  return app;
}
