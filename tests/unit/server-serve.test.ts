import { Agent, request } from 'node:http';
import { type AddressInfo, connect, createServer } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, MAX_BODY_BYTES } from '../../ts/server/app.js';
import type { SearchEngine } from '../../ts/server/engine.js';
import { type RunningServer, ServerStartError, serveApp, serveHandedSockets } from '../../ts/server/serve.js';

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

describe('serveApp', () => {
  it('serves on 127.0.0.1 and refuses a taken port with a clear error', async () => {
    const app = new Hono().get('/ping', (c) => c.text('pong'));
    const a = await serveApp(app, { host: '127.0.0.1', port: 0 });
    running.push(a);
    expect(await (await fetch(`${a.url}/ping`)).text()).toBe('pong');
    const err = await serveApp(app, { host: '127.0.0.1', port: a.port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as ServerStartError).code).toBe('port_in_use');
    expect((err as Error).message).toContain(String(a.port));
  });

  it('lets an in-flight request finish on close', async () => {
    const app = new Hono().get('/slow', async (c) => {
      await new Promise((r) => setTimeout(r, 200));
      return c.text('done');
    });
    const s = await serveApp(app, { host: '127.0.0.1', port: 0, graceMs: 5000 });
    const pending = fetch(`${s.url}/slow`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 50));
    await s.close();
    expect(await pending).toBe('done');
  });
});

describe('serveHandedSockets (a --workers worker: sockets accepted by the primary)', () => {
  it('serves handed sockets, lets an in-flight request finish on close, closes idle ones, refuses new ones', async () => {
    const app = new Hono()
      .get('/ping', (c) => c.text('pong'))
      .get('/slow', async (c) => {
        await new Promise((r) => setTimeout(r, 200));
        return c.text('done');
      });
    const handed = serveHandedSockets(app, 5000);
    let closes = 0;
    // The primary's side: accept paused, hand over.
    const front = createServer({ pauseOnConnect: true }, (socket) => handed.adopt(socket, () => closes++));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const agent = new Agent({ keepAlive: true });
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        request(`${url}${path}`, { agent }, (res) => {
          let body = '';
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => resolve(body));
        })
          .on('error', reject)
          .end();
      });
    const pending = get('/slow');
    await new Promise((r) => setTimeout(r, 20));
    expect(await get('/ping')).toBe('pong'); // a second socket, left idle (keep-alive)
    const t0 = Date.now();
    await handed.close();
    // Waited for /slow, not for the grace period: the idle socket was closed at once.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await pending).toBe('done');
    expect(closes).toBe(2); // the idle socket and the one that served /slow
    // After close, a handed socket is closed at once.
    const refused = await new Promise<string>((resolve) => {
      const c = connect((front.address() as AddressInfo).port, '127.0.0.1');
      c.on('error', () => resolve('error'));
      c.on('close', () => resolve('closed'));
    });
    expect(refused).toBe('closed');
    expect(closes).toBe(3);
    agent.destroy();
    front.close();
  });
});

describe('the question routes over a real socket (the Node body and disconnect paths)', () => {
  const engineWith = (retrieve: SearchEngine['retrieve']): SearchEngine => ({
    status: async () => ({ ready: true, generation: 1, nodes: 1, vectors: 1 }),
    retrieve,
    answer: async () => {
      throw new Error('not used');
    },
  });

  /** Sends a raw request; `chunks` are written with chunked transfer encoding. */
  function rawPost(port: number, chunks: string[]): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/retrieval',
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (const c of chunks) req.write(c);
      req.end();
    });
  }

  it('reads chunked bodies, and refuses one over the limit with 413 whatever the headers say', async () => {
    const app = createApp({
      engine: engineWith(async (q) => ({ retrievalInfo: `ctx:${q}`, retrievalTokens: 1 })),
    });
    const s = await serveApp(app, { host: '127.0.0.1', port: 0 });
    running.push(s);
    const ok = await rawPost(s.port, ['{"question":', '"Who?"}']);
    expect(ok).toEqual({ status: 200, body: '{"retrieval":"ctx:Who?","sources":[]}' });
    const big = `{"question":"${'x'.repeat(MAX_BODY_BYTES)}"}`;
    const tooBig = await rawPost(s.port, [big.slice(0, 40_000), big.slice(40_000)]);
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body).error.code).toBe('payload_too_large');
    const bad = await rawPost(s.port, ['{"question":']);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('invalid_json');
  });

  it('a client that disconnects aborts the engine call', async () => {
    let abortedWith: unknown;
    let started!: () => void;
    const inFlight = new Promise<void>((r) => {
      started = r;
    });
    const logged: unknown[] = [];
    const app = createApp({
      logError: (e) => logged.push(e),
      engine: engineWith(
        (_q, signal) =>
          new Promise((_, reject) => {
            started();
            signal.addEventListener('abort', () => {
              abortedWith = signal.reason;
              reject(signal.reason);
            });
          }),
      ),
    });
    const s = await serveApp(app, { host: '127.0.0.1', port: 0, graceMs: 100 });
    running.push(s);
    const controller = new AbortController();
    const pending = fetch(`${s.url}/retrieval`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"question":"Who?"}',
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await inFlight;
    controller.abort();
    await pending;
    for (let i = 0; i < 100 && abortedWith === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(String(abortedWith)).toContain('client disconnected');
    // Not an internal error: nothing is logged for a client that went away.
    await new Promise((r) => setTimeout(r, 50));
    expect(logged).toEqual([]);
  });

  it('a client that leaves before sending its whole body is a quiet 499, nothing logged', async () => {
    const logged: unknown[] = [];
    const statuses: number[] = [];
    const app = createApp({
      logError: (e) => logged.push(e),
      engine: engineWith(async () => ({ retrievalInfo: '', retrievalTokens: 0 })),
    });
    // An outer app records the status the API gave the request.
    const outer = new Hono();
    outer.use(async (c, next) => {
      await next();
      statuses.push(c.res.status);
    });
    outer.route('/', app);
    const s = await serveApp(outer, { host: '127.0.0.1', port: 0, graceMs: 100 });
    running.push(s);
    for (const framing of ['Content-Length: 100\r\n', 'Transfer-Encoding: chunked\r\n']) {
      const socket = connect(s.port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      const part = framing.startsWith('Content') ? '{"question":' : 'c\r\n{"question":\r\n';
      socket.write(
        `POST /retrieval HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n${part}`,
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
    }
    for (let i = 0; i < 100 && statuses.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(statuses).toEqual([499, 499]);
    expect(logged).toEqual([]);
  });

  it('a keep-alive connection hands its unused signal to its next request, never an aborted or listened one', async () => {
    const signals: AbortSignal[] = [];
    let mode: 'plain' | 'listen' | 'slow' = 'plain';
    const app = createApp({
      requestTimeoutMs: 100,
      engine: engineWith(async (q, signal) => {
        signals.push(signal);
        if (mode === 'listen') signal.addEventListener('abort', () => {});
        if (mode === 'slow') await new Promise((r) => setTimeout(r, 300));
        return { retrievalInfo: `ctx:${q}`, retrievalTokens: 1 };
      }),
    });
    const s = await serveApp(app, { host: '127.0.0.1', port: 0, graceMs: 100 });
    running.push(s);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = () =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            agent,
            host: '127.0.0.1',
            port: s.port,
            method: 'POST',
            path: '/retrieval',
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end('{"question":"Who?"}');
      });
    expect([await post(), await post()]).toEqual([200, 200]);
    expect(signals[1]).toBe(signals[0]);
    mode = 'listen';
    await post();
    mode = 'plain';
    await post();
    // The third request left a listener on its signal: the fourth got a new one.
    expect(signals[2]).toBe(signals[1]);
    expect(signals[3]).not.toBe(signals[2]);
    mode = 'slow';
    expect(await post()).toBe(504);
    mode = 'plain';
    await new Promise((r) => setTimeout(r, 300));
    expect(await post()).toBe(200);
    // The deadline aborted the fifth request's signal: the sixth got a new, live one.
    expect(signals[4]!.aborted).toBe(true);
    expect(signals[5]).not.toBe(signals[4]);
    expect(signals[5]!.aborted).toBe(false);
    agent.destroy();
  });
});

describe('requests that never reach the app get JSON errors too', () => {
  /** Writes `raw` on a new connection and returns everything the server sends back. */
  function rawExchange(port: number, raw: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let reply = '';
      s.on('data', (d) => {
        reply += d;
      });
      s.on('end', () => resolve(reply));
      s.on('error', reject);
      s.write(raw);
    });
  }

  it('a Host that makes no URL, bad HTTP and oversized headers: status and {"error": …}', async () => {
    const server = await serveApp(createApp({ engine: {} as never }), { host: '127.0.0.1', port: 0 });
    try {
      const cases: [string, number, string][] = [
        ['GET /health HTTP/1.1\r\nHost: a b\r\n\r\n', 400, 'bad_request'],
        ['NOT HTTP AT ALL\r\n\r\n', 400, 'bad_request'],
        [
          `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`,
          431,
          'headers_too_large',
        ],
      ];
      for (const [raw, status, code] of cases) {
        const reply = await rawExchange(server.port, raw);
        expect(reply.split('\r\n')[0], code).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(reply).toMatch(/content-type: application\/json/i);
        const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
        expect(body.error.code).toBe(code);
      }
    } finally {
      await server.close();
    }
  });
});
