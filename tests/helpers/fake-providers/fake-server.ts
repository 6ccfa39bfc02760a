/**
 * Shared plumbing of the fake provider servers: a node:http server on 127.0.0.1 (port 0),
 * a log of every request (route, arrival time, body), a fixed latency, and injectable faults
 * that apply to the next matching requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { localReply } from '../../../ts/llm/local/provider.js';
import { buildRequest } from '../../../ts/llm/prompts/index.js';
import type { ChatMessage } from '../../../ts/llm/types.js';
import { recognizePrompt } from './prompt-inputs.js';

export type Fault =
  /** Answer with this HTTP status (and Retry-After header value, if given). */
  | { kind: 'status'; status: number; retryAfter?: string; message?: string }
  /** Wait before answering normally (longer than the client's timeout = a timeout). */
  | { kind: 'delay'; ms: number }
  /** HTTP 200 whose body is cut-off JSON. */
  | { kind: 'malformed-json' }
  /** A well-formed response whose chat content is not valid JSON for the schema. */
  | { kind: 'invalid-reply' }
  /** Embedding vectors of this length instead of the requested one. */
  | { kind: 'wrong-dim'; dim: number }
  /** Close the connection without answering. */
  | { kind: 'reset' }
  /** A streamed reply whose connection is destroyed after this many events. */
  | { kind: 'stream-cut'; afterEvents: number }
  /** This exact body (status 200 and JSON unless given): a reply of the wrong shape. */
  | { kind: 'raw'; body: string; status?: number; contentType?: string };

export interface FaultRule {
  /** Route the fault applies to; all routes when absent. */
  route?: string;
  /** How many matching requests get it (default 1). */
  times?: number;
  fault: Fault;
}

export interface LoggedRequest {
  route: string;
  /** performance.now() when the request arrived (before any latency or fault). */
  at: number;
  body: unknown;
  headers: IncomingMessage['headers'];
  url: string;
}

export interface FakeServerOptions {
  /** Added to every response, in ms. */
  latencyMs?: number;
  /** When set, requests without this key are answered 401. */
  apiKey?: string;
  /** Embedding length when the request does not name one (default 1536). */
  dim?: number;
  /** Wait between two events of a streamed reply, in ms (default 0). */
  streamDelayMs?: number;
}

export interface RouteContext {
  body: unknown;
  fault: Fault | undefined;
  options: FakeServerOptions;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A streamed reply instead of `body`: these `data:` events (JSON text or `[DONE]`). */
  events?: string[];
}

export type RouteHandler = (ctx: RouteContext) => RouteResult;

export interface Route {
  name: string;
  match: (method: string, path: string) => boolean;
  handle: RouteHandler;
}

/** What a fake provider returns to its tests. */
export class FakeProviderServer {
  readonly requests: LoggedRequest[] = [];
  readonly options: FakeServerOptions;
  /** Streamed replies whose client closed the connection before the last event. */
  streamsAbandoned = 0;
  #faults: FaultRule[] = [];
  #server: Server;
  #url = '';

  constructor(
    private readonly routes: Route[],
    private readonly authorised: (req: IncomingMessage, key: string) => boolean,
    private readonly errorBody: (status: number, message: string) => unknown,
    options: FakeServerOptions = {},
  ) {
    this.options = { ...options };
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((e) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.errorBody(500, String(e))));
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}`;
    return this;
  }

  /** `http://127.0.0.1:<port>` (no path). */
  get origin(): string {
    return this.#url;
  }

  /** Queues a fault for the next matching request(s). */
  inject(rule: FaultRule): void {
    this.#faults.push({ times: 1, ...rule });
  }

  clearFaults(): void {
    this.#faults = [];
  }

  /** Requests received, optionally for one route. */
  count(route?: string): number {
    return route ? this.requests.filter((r) => r.route === route).length : this.requests.length;
  }

  reset(): void {
    this.requests.length = 0;
    this.clearFaults();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #takeFault(route: string): Fault | undefined {
    const i = this.#faults.findIndex(
      (f) => (f.route === undefined || f.route === route) && (f.times ?? 1) > 0,
    );
    if (i < 0) return undefined;
    const rule = this.#faults[i] as FaultRule;
    rule.times = (rule.times ?? 1) - 1;
    if (rule.times <= 0) this.#faults.splice(i, 1);
    return rule.fault;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now();
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const route = this.routes.find((r) => r.match(req.method ?? 'GET', url.pathname));
    const name = route?.name ?? 'unknown';
    this.requests.push({ route: name, at, body, headers: req.headers, url: req.url ?? '' });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    };
    if (!route) return send(404, this.errorBody(404, `no route ${req.method} ${url.pathname}`));
    if (this.options.apiKey && !this.authorised(req, this.options.apiKey)) {
      return send(401, this.errorBody(401, 'invalid API key'));
    }
    const fault = this.#takeFault(name);
    if (this.options.latencyMs) await delay(this.options.latencyMs);
    if (fault?.kind === 'delay') await delay(fault.ms);
    if (res.destroyed) return;
    switch (fault?.kind) {
      case 'reset':
        req.socket.destroy();
        return;
      case 'status':
        return send(
          fault.status,
          this.errorBody(fault.status, fault.message ?? `injected ${fault.status}`),
          fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {},
        );
      case 'malformed-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "x", "choices": [{"message": ');
        return;
      case 'raw':
        res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? 'application/json' });
        res.end(fault.body);
        return;
    }
    const result = route.handle({ body, fault, options: this.options });
    if (result.events) return this.#stream(res, result.events, fault);
    send(result.status, result.body, result.headers);
  }

  /** Server-sent events, `streamDelayMs` apart; counts a client that leaves before the end. */
  async #stream(res: ServerResponse, events: string[], fault: Fault | undefined): Promise<void> {
    let ended = false;
    res.once('close', () => {
      if (!ended) this.streamsAbandoned++;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [i, event] of events.entries()) {
      if (fault?.kind === 'stream-cut' && i === fault.afterEvents) {
        ended = true;
        res.socket?.destroy();
        return;
      }
      if (i > 0 && this.options.streamDelayMs) await delay(this.options.streamDelayMs);
      if (res.destroyed) return;
      res.write(`data: ${event}\n\n`);
    }
    ended = true;
    res.end();
  }
}

/**
 * The reply of the local provider to a rendered conversation, as the fake servers send it:
 * JSON text for structured tasks (or when JSON output is requested), plain text otherwise.
 */
export function fakeReply(messages: ChatMessage[], wantJson: boolean, fault: Fault | undefined): string {
  if (fault?.kind === 'invalid-reply') return wantJson ? 'Sure! Here is the JSON you asked for.' : '';
  const call = recognizePrompt(messages);
  if (!call) return wantJson ? '{}' : 'fake reply to an unknown prompt';
  const reply = localReply(buildRequest(call));
  return typeof reply === 'string' ? reply : JSON.stringify(reply);
}
