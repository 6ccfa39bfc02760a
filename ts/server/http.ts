/**
 * The HTTP plumbing shared by the search API (./app.ts) and the web UI (ts/ui): the error
 * type, the one mapping from errors to statuses and JSON bodies, the request-body readers and
 * the client-disconnect signal.
 *
 * Every error reply is `{"error": {"code", "message", "problems"?}}`. Bodies are limited on
 * the bytes actually read, whatever Content-Length says (chunked bodies have none). A client
 * that leaves before its whole body is read, or before the reply, gets 499 and nothing is
 * logged; only unexpected errors (500) are logged, and their reply names no detail.
 */
import { getEventListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, ErrorHandler } from 'hono';
import { ConfigError, NodeRagError, ProviderError } from '../errors.js';
import { jsonType } from '../search/question.js';

/** A problem with one field of a request, by its dotted key path. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** An error that carries its own HTTP status. */
export class HttpError extends NodeRagError {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly problems: FieldProblem[] | undefined;
  constructor(
    status: number,
    code: string,
    message: string,
    extra: { headers?: Record<string, string>; problems?: FieldProblem[] } = {},
  ) {
    super(code, message);
    this.status = status;
    this.headers = extra.headers ?? {};
    this.problems = extra.problems;
  }
}

/** nginx's "client closed request": the reply goes nowhere and nothing is logged. */
export const CLIENT_CLOSED = 499;

export function clientClosed(): HttpError {
  return new HttpError(CLIENT_CLOSED, 'client_closed_request', 'client disconnected before the reply');
}

export interface ErrorReply {
  status: number;
  code: string;
  message: string;
  problems?: FieldProblem[];
}

/** The one mapping from errors to HTTP statuses and reply bodies. */
export function statusFor(e: unknown): ErrorReply {
  if (e instanceof HttpError) {
    const reply: ErrorReply = { status: e.status, code: e.code, message: e.message };
    if (e.problems) reply.problems = e.problems;
    return reply;
  }
  if (e instanceof ProviderError) {
    const timeout = e.code === 'upstream_timeout';
    return {
      status: timeout ? 504 : 502,
      code: timeout ? 'upstream_timeout' : 'upstream_error',
      message: e.message,
    };
  }
  if (e instanceof ConfigError) return { status: 422, code: e.code, message: e.message };
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
      // The project has no input/ (moved or deleted while the server runs).
      case 'no_input_folder':
        return { status: 409, code: e.code, message: e.message };
    }
  }
  return { status: 500, code: 'internal_error', message: 'internal error; see the server log' };
}

/** Hono's `onError` for both apps: the mapped reply; unexpected errors (500) are logged. */
export function errorHandler(logError: (e: unknown) => void): ErrorHandler {
  return (e, c) => {
    const { status, ...error } = statusFor(e);
    if (status === 500) logError(e);
    let headers = e instanceof HttpError ? e.headers : {};
    const { incoming } = nodeBindings(c);
    // A body not read to its end (a refused upload) closes the connection after the reply.
    // A request without a body is not `complete` yet while its handler runs (Node marks it
    // a turn later), so it is told apart by its headers: its connection stays open.
    if (incoming && !incoming.complete && status !== CLIENT_CLOSED && hasBody(incoming)) {
      headers = { ...headers, Connection: 'close' };
      lingerAfterReply(incoming);
    }
    return c.json({ error }, status as 500, headers);
  };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** What is read and dropped of a refused body after the reply, at most (bytes, ms). */
const LINGER_BYTES = 16 * 1024 * 1024;
const LINGER_MS = 5_000;

/**
 * Answer, then close: a reply refusing a body not yet read to its end (413 over the limit,
 * 415, 400) goes out with `Connection: close`, and the rest of the body is read and dropped
 * for a while. Closing the socket at once with unread data in it makes the kernel send a
 * reset, which can reach a client still sending before it reads the reply; so the socket is
 * half-closed after the reply and destroyed when the client has sent everything, or past
 * LINGER_BYTES or LINGER_MS.
 */
function lingerAfterReply(incoming: IncomingMessage): void {
  const socket = incoming.socket;
  if (!socket || socket.destroyed) return;
  let left = LINGER_BYTES;
  incoming.on('data', (chunk: Buffer) => {
    left -= chunk.byteLength;
    if (left < 0) socket.destroy();
  });
  incoming.resume();
  // Node ends a `Connection: close` reply with destroySoon(): FIN, then destroy once written.
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    if (incoming.complete) done();
    else {
      incoming.once('end', done);
      socket.once('close', () => clearTimeout(timer));
    }
  };
}

/** What @hono/node-server passes as `c.env`: the raw Node request and response. */
export interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

export function nodeBindings(c: Context): NodeBindings {
  return (c.env ?? {}) as NodeBindings;
}

/** The error a failed read of a Node request body stands for: 499 when the client left. */
function readFailure(incoming: IncomingMessage, e: unknown): unknown {
  return incoming.complete ? e : clientClosed();
}

/**
 * The request body as chunks, for bodies written somewhere as they arrive (uploads). At most
 * `maxBytes` are read: past them `tooLarge()` is thrown and the rest is left unread. Under
 * Node the IncomingMessage is read directly and paused between chunks, so a fast client
 * cannot make the server buffer more than one chunk.
 */
export async function* bodyChunks(
  c: Context,
  maxBytes: number,
  tooLarge: () => HttpError,
): AsyncGenerator<Uint8Array, void, undefined> {
  const { incoming } = nodeBindings(c);
  let size = 0;
  const count = (chunk: Uint8Array) => {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
  };
  if (!incoming) {
    const body = c.req.raw.body;
    if (!body) return;
    const reader = body.getReader();
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          finished = true;
          return;
        }
        count(value);
        yield value;
      }
    } finally {
      if (!finished) await reader.cancel().catch(() => {});
    }
  }
  const queue: Buffer[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    incoming.pause();
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onError = (e: unknown) => {
    failure ??= readFailure(incoming, e);
    wake?.();
  };
  const onClose = () => {
    if (!incoming.complete) onError(clientClosed());
  };
  incoming.on('data', onData);
  incoming.on('end', onEnd);
  incoming.on('error', onError);
  incoming.on('aborted', onClose);
  incoming.on('close', onClose);
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk) {
        count(chunk);
        yield chunk;
        continue;
      }
      if (failure) throw failure;
      if (ended || incoming.readableEnded) return;
      const waiting = new Promise<void>((r) => {
        wake = r;
      });
      incoming.resume();
      await waiting;
      wake = null;
    }
  } finally {
    incoming.off('data', onData);
    incoming.off('end', onEnd);
    incoming.off('error', onError);
    incoming.off('aborted', onClose);
    incoming.off('close', onClose);
    // Whatever is left unread stays so: the reply is sent and Node closes the connection.
    if (!ended) incoming.pause();
  }
}

/** The whole body as bytes, at most `maxBytes` (413 `tooLarge()` past them). */
export function readBody(c: Context, maxBytes: number, tooLarge: () => HttpError): Promise<Buffer> {
  const { incoming } = nodeBindings(c);
  // Under Node, plain events on the IncomingMessage: going through the web Request's body
  // stream costs more than the rest of a cached question (bench/RESULTS.md ## server).
  if (!incoming) return readAll(bodyChunks(c, maxBytes, tooLarge));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (e?: unknown) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('aborted', onAborted);
      incoming.off('close', onAborted);
      if (e) reject(e);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        incoming.pause();
        done(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done();
    const onError = (e: unknown) => done(readFailure(incoming, e));
    const onAborted = () => {
      if (!incoming.complete) done(clientClosed());
    };
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('error', onError);
    incoming.once('aborted', onAborted);
    incoming.once('close', onAborted);
  });
}

async function readAll(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** The largest JSON body either app accepts. */
export const MAX_BODY_BYTES = 64 * 1024;

function bodyTooLarge(maxBytes: number): () => HttpError {
  return () => new HttpError(413, 'payload_too_large', `the body is larger than ${maxBytes / 1024} KiB`);
}

/**
 * A JSON object body: `Content-Type` must be JSON (`application/json` or `…+json`), the body at
 * most `maxBytes`, valid JSON, and an object. Each failure is its own 4xx with a clear code.
 */
export async function readJsonObject(
  c: Context,
  maxBytes: number = MAX_BODY_BYTES,
): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  const mime = type.split(';')[0]!.trim().toLowerCase();
  if (mime !== 'application/json' && !mime.endsWith('+json')) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be application/json, got "${type || 'none'}"`,
    );
  }
  const tooLarge = bodyTooLarge(maxBytes);
  if (Number(c.req.header('content-length') ?? '0') > maxBytes) throw tooLarge();
  // A byte-order mark before the JSON is ignored, as RFC 8259 allows (some Windows tools write one).
  const text = (await readBody(c, maxBytes, tooLarge)).toString('utf8').replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'the body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, 'invalid_body', `the body must be a JSON object, got ${jsonType(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Runs `work` with an AbortSignal that fires when the client disconnects (reason: the 499
 * error) or, with `timeoutMs`, at the request deadline (504). Under Node the disconnect is the
 * response's 'close' before it finished (cheaper than the web Request's signal, which the
 * adapter would have to create for every request).
 *
 * Under Node a signal that was never aborted and that nothing listens to any more is kept
 * with its connection and given to the next request on it: an AbortController and its
 * signal per request (an EventTarget each) were a measurable share of a short request, and
 * a keep-alive connection carries its requests one after the other. A request finds the
 * connection's signal only when no other request of the connection holds it; an aborted
 * signal, or one something still listens to, is never handed on.
 */
export function withRequestSignal<T>(
  c: Context,
  work: (signal: AbortSignal) => Promise<T>,
  timeoutMs?: number,
): Promise<T> {
  const { outgoing, incoming } = nodeBindings(c);
  const socket = outgoing ? incoming?.socket : undefined;
  const controller = (socket && takeIdle(socket)) || new AbortController();
  const onClientGone = () => controller.abort(clientClosed());
  const onClose = () => {
    if (!outgoing?.writableFinished) onClientGone();
  };
  const clientSignal = outgoing ? undefined : c.req.raw.signal;
  if (outgoing) outgoing.once('close', onClose);
  else clientSignal?.addEventListener('abort', onClientGone, { once: true });
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    /** The first outcome wins (the work, or the deadline, which does not wait for it). */
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.off('close', onClose);
      clientSignal?.removeEventListener('abort', onClientGone);
      if (socket) giveBack(socket, controller);
      done();
    };
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        const err = new HttpError(
          504,
          'request_timeout',
          `the request took longer than ${Math.round(timeoutMs / 1000)} s`,
        );
        controller.abort(err);
        settle(() => reject(err));
      }, timeoutMs);
    }
    let running: Promise<T>;
    try {
      running = work(controller.signal);
    } catch (e) {
      settle(() => reject(e));
      return;
    }
    running.then(
      (value) => settle(() => resolve(value)),
      (e: unknown) => settle(() => reject(e)),
    );
  });
}

/** Each connection's idle controller (see withRequestSignal). */
const IDLE = new WeakMap<object, AbortController>();

function takeIdle(socket: object): AbortController | undefined {
  const idle = IDLE.get(socket);
  if (idle) IDLE.delete(socket);
  return idle;
}

/** Keeps `controller` for the connection's next request if it is as good as new. */
function giveBack(socket: object, controller: AbortController): void {
  const signal = controller.signal;
  if (signal.aborted || getEventListeners(signal, 'abort').length > 0) return;
  IDLE.set(socket, controller);
}
