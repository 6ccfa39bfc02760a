/**
 * The `fetch` of the openai adapter: node:http / node:https with keep-alive agents, returning a
 * standard `Response`.
 *
 * Why not Node's own fetch (undici): per request it builds a WHATWG Request, header lists and
 * body streams on both sides of the connection; measured on a zero-latency local server it
 * took about 0.35 ms of CPU per completion against 0.13 ms here, and in a build of ~2,300 calls
 * (bench peer) it was the largest item of the build's main-thread time outside the stages'
 * own work (bench/RESULTS.md). It also drops a reply whose headers take longer than 300 s (a
 * non-streaming completion of a big local model on CPU); node:http has no such limit, so each
 * attempt's own timeout (CachedProvider, `request_timeout`) is the only clock.
 *
 * What the adapter needs of fetch is kept: the method, headers and a string or byte body go
 * out; redirects are followed (307/308 keep the method and body, 301/302/303 turn a POST into
 * a GET, as fetch does); gzip, deflate and br replies are decoded; a server-sent-events reply
 * (`text/event-stream`) is handed over as a stream, any other body read whole first; an abort
 * rejects with the signal's reason and ends a stream with it. Requests this module does not
 * handle (a `Request` object, a stream or form body) go to the global fetch unchanged.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
const MAX_REDIRECTS = 20;
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

type Body = string | Uint8Array | undefined;

/** The body as bytes or a string, or null when it needs the global fetch (streams, forms). */
function simpleBody(body: RequestInit['body']): Body | null {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return null;
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers) {
    for (const [k, v] of new Headers(headers)) out[k] = v;
  }
  out['accept-encoding'] ??= 'gzip, deflate, br';
  return out;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The decoded body stream of a reply (content-encoding gzip, deflate or br). */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.on('error', (e) => decoder.destroy(e));
  return res.pipe(decoder);
}

function responseHeaders(res: IncomingMessage, dropEncoding: boolean): Headers {
  const h = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    // The body handed over is decoded, so its encoding and length headers no longer apply.
    if (dropEncoding && (lower === 'content-encoding' || lower === 'content-length')) continue;
    h.append(name, raw[i + 1] as string);
  }
  return h;
}

interface Sent {
  res: IncomingMessage;
  /** Destroys the request (and so the reply stream) with an error. */
  destroy: (e: unknown) => void;
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Body,
  signal?: AbortSignal | null,
) {
  return new Promise<Sent>((resolve, reject) => {
    const https = url.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)(url, {
      method,
      headers,
      agent: https ? agents.https : agents.http,
    });
    const onAbort = () => req.destroy(abortError(signal as AbortSignal) as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal?.removeEventListener('abort', onAbort);
    req.on('error', (e) => {
      settle();
      reject(signal?.aborted ? abortError(signal) : new TypeError('fetch failed', { cause: e }));
    });
    req.on('response', (res) => {
      res.on('close', settle);
      resolve({ res, destroy: (e) => req.destroy(e as Error) });
    });
    req.end(body);
  });
}

/** Reads a whole reply; rejects with the abort reason or a network error. */
function readAll(stream: Readable, signal?: AbortSignal | null): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    stream.on('error', (e) =>
      reject(signal?.aborted ? abortError(signal) : new TypeError('fetch failed', { cause: e })),
    );
    stream.on('close', () => {
      if (!stream.readableEnded) reject(signal?.aborted ? abortError(signal) : new TypeError('terminated'));
    });
  });
}

const utf8 = new TextDecoder();

/**
 * A reply read whole, as a `Response` whose body reads skip undici's body machinery (body
 * extraction, stream, `fullyReadBody`): the bytes are decoded and parsed directly. The
 * openai SDK reads every reply with `json()`; bench/peer/call-overhead.ts measured the SDK's
 * CPU per call (decomposition calls and base64 embedding batches) at 0.48 ms with a plain
 * `new Response(bytes)` and 0.34 ms with this (load 3.5). Same results: `text()` decodes UTF-8 and drops a leading BOM as
 * `Response.text()` does, `json()` parses that text, a second read is a TypeError, and `body`
 * (the SDK only cancels it) is a stream of the bytes.
 */
function wholeResponse(bytes: Buffer, init: ResponseInit): Response {
  const res = new Response(null, init);
  let used = false;
  let stream: ReadableStream<Uint8Array> | undefined;
  const take = (): Buffer => {
    if (used || stream?.locked) throw new TypeError('Body is unusable: Body has already been read');
    used = true;
    return bytes;
  };
  // Once `body` has been handed out, reads go through it, as they would on a real Response.
  const viaStream = () => stream !== undefined && !used;
  const text = async (): Promise<string> => (viaStream() ? new Response(stream).text() : utf8.decode(take()));
  const arrayBuffer = async (): Promise<ArrayBuffer> => {
    if (viaStream()) return new Response(stream).arrayBuffer();
    const b = take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
  };
  Object.defineProperties(res, {
    body: {
      get: () => {
        stream ??= new ReadableStream<Uint8Array>({
          start(controller) {
            if (bytes.length > 0)
              controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
            controller.close();
          },
        });
        return stream;
      },
    },
    bodyUsed: { get: () => used || stream?.locked === true },
    text: { value: text },
    json: { value: async (): Promise<unknown> => JSON.parse(await text()) },
    arrayBuffer: { value: arrayBuffer },
    bytes: { value: async () => new Uint8Array(await arrayBuffer()) },
    blob: {
      value: async () => new Blob([await arrayBuffer()], { type: res.headers.get('content-type') ?? '' }),
    },
    clone: {
      value: (): Response => {
        if (used) throw new TypeError('Response.clone: Body has already been consumed.');
        return wholeResponse(bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
      },
    },
  });
  return res;
}

/** Headers that carry a key: dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'api-key', 'x-api-key', 'x-goog-api-key', 'cookie']);

/** The reply after redirects, its body decoded; what `httpFetch` and `httpPostWhole` share. */
async function exchange(
  input: URL,
  method: string,
  headers: Record<string, string>,
  payload: Body,
  signal: AbortSignal | null | undefined,
  redirect: RequestInit['redirect'],
): Promise<{ res: IncomingMessage; stream: Readable; method: string; destroy: (e: unknown) => void }> {
  let url = input;
  for (let hop = 0; ; hop++) {
    const { res, destroy } = await send(url, method, headers, payload, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (location && [301, 302, 303, 307, 308].includes(status) && redirect !== 'manual') {
      res.resume();
      if (redirect === 'error' || hop >= MAX_REDIRECTS)
        throw new TypeError('fetch failed', { cause: new Error(`redirect to ${location}`) });
      const next = new URL(location, url);
      // As fetch does: credentials are for the origin they were configured for, never for
      // another one a reply points to (an https → http downgrade is another origin too).
      if (next.origin !== url.origin) {
        for (const name of Object.keys(headers)) {
          if (CREDENTIAL_HEADERS.has(name.toLowerCase())) delete headers[name];
        }
      }
      url = next;
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        payload = undefined;
        delete headers['content-type'];
        delete headers['content-length'];
      }
      continue;
    }
    return { res, stream: decoded(res), method, destroy };
  }
}

export async function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = simpleBody(init.body);
  if (input instanceof Request || body === null) return fetch(input, init);
  const { signal } = init;
  if (signal?.aborted) throw abortError(signal);
  const headers = headerRecord(init.headers);
  const { res, stream, method, destroy } = await exchange(
    new URL(input),
    (init.method ?? 'GET').toUpperCase(),
    headers,
    body,
    signal,
    init.redirect,
  );
  const status = res.statusCode ?? 0;
  const init2 = {
    status,
    statusText: res.statusMessage ?? '',
    headers: responseHeaders(res, stream !== res),
  };
  if (NULL_BODY_STATUS.has(status) || method === 'HEAD') {
    res.resume();
    return new Response(null, init2);
  }
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // Streamed: an abort from here on ends the stream with the signal's reason.
    const onAbort = () => {
      stream.destroy(abortError(signal as AbortSignal) as Error);
      destroy(abortError(signal as AbortSignal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.once('close', () => signal?.removeEventListener('abort', onAbort));
    return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, init2);
  }
  return wholeResponse(await readAll(stream, signal), init2);
}

/** A reply read whole by `httpPostWhole`. */
export interface WholeReply {
  status: number;
  /** The reply's headers as `fetch` gives them (made on demand). */
  headers: () => Headers;
  /** A header's value (lower-case name), as `Headers.get` gives it. */
  header: (name: string) => string | null;
  /** The decoded body; empty for a status without one. */
  bytes: Buffer;
}

/**
 * `httpFetch` of a POST whose reply is read whole (a server-sent-events reply too), returned
 * as status, headers and bytes without a `Response` around them (the openai adapter's
 * non-streamed requests). `headers` must be lower-case names; the body is sent as is.
 * Same transport, redirects, decoding and errors as `httpFetch`.
 */
export async function httpPostWhole(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  signal?: AbortSignal,
): Promise<WholeReply> {
  if (signal?.aborted) throw abortError(signal);
  const sent = { 'accept-encoding': 'gzip, deflate, br', ...headers };
  const { res, stream } = await exchange(new URL(url), 'POST', sent, body, signal, undefined);
  const status = res.statusCode ?? 0;
  let bytes: Buffer;
  if (NULL_BODY_STATUS.has(status)) {
    res.resume();
    bytes = Buffer.alloc(0);
  } else {
    bytes = await readAll(stream, signal);
  }
  const dropEncoding = stream !== res;
  let made: Headers | undefined;
  const all = () => {
    made ??= responseHeaders(res, dropEncoding);
    return made;
  };
  return {
    status,
    headers: all,
    header: (name) => {
      if (dropEncoding && (name === 'content-encoding' || name === 'content-length')) return null;
      const v = res.headers[name];
      // Several values (set-cookie aside) are joined as Headers.get joins them.
      return v === undefined ? null : Array.isArray(v) ? all().get(name) : v;
    },
    bytes,
  };
}
