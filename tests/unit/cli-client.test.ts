import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askServer, routeFor, streamAnswer } from '../../ts/cli/client.js';
import { CliExit } from '../../ts/cli/exit.js';
import { eventField } from '../../ts/cli/sse.js';
import { InvalidQuestionError } from '../../ts/errors.js';
import { createApp } from '../../ts/server/app.js';
import { type RunningServer, serveApp } from '../../ts/server/serve.js';

let server: RunningServer;
beforeAll(async () => {
  const app = createApp({
    engine: {
      status: async () => ({ ready: true, generation: 1, nodes: 1, vectors: 1 }),
      retrieve: async (q) => ({ retrievalInfo: `ctx:${q}`, retrievalTokens: 1 }),
      answer: async (q) => {
        if (q === 'bad') throw new InvalidQuestionError('empty_question', 'nope');
        return { response: `ans:${q}`, responseTokens: 1, retrievalInfo: `ctx:${q}`, retrievalTokens: 1 };
      },
    },
  });
  server = await serveApp(app, { host: '127.0.0.1', port: 0 });
});
afterAll(() => server.close());

const ask = (question: string, retrieval: boolean, answer: boolean, port = server.port) =>
  askServer({
    host: '127.0.0.1',
    port,
    question,
    retrieval,
    answer,
    timeoutMs: 5000,
    startHint: 'noderag search -f X',
  });

describe('terminal client (docs/method.md §7.3)', () => {
  it('picks the route from the flags', () => {
    expect(routeFor(false, false)).toBe('/answer');
    expect(routeFor(false, true)).toBe('/answer');
    expect(routeFor(true, false)).toBe('/retrieval');
    expect(routeFor(true, true)).toBe('/answer_retrieval');
  });

  it('prints the answer, the retrieval, or both as JSON', async () => {
    expect(await ask('q', false, false)).toBe('ans:q');
    expect(await ask('q', true, false)).toBe('ctx:q');
    expect(JSON.parse(await ask('q', true, true))).toEqual({ answer: 'ans:q', retrieval: 'ctx:q' });
  });

  it('an error reply becomes "<code>: <message>"', async () => {
    const e = await ask('bad', false, true).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CliExit);
    expect((e as CliExit).message).toBe('empty_question: nope');
    expect((e as CliExit).exitCode).toBe(1);
  });

  // JSON may hold U+2028/U+2029 raw, and SSE ends lines only at CR and LF: a JavaScript
  // `.`/`$` line split cut such an event short ("Unterminated string in JSON").
  it('reads streamed events whose JSON holds raw U+2028 and U+2029', async () => {
    const name = 'report\u2028final\u2029.txt';
    const raw = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        `data: ${JSON.stringify({ type: 'delta', text: 'line one\u2028line two ' })}\n\n` +
          `data: ${JSON.stringify({ type: 'delta', text: 'end [1]' })}\n\n` +
          `data: ${JSON.stringify({ type: 'done', sources: [{ document: name, items: [1] }], citations: [] })}\n\n`,
      );
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const port = (raw.address() as { port: number }).port;
      let written = '';
      const after = await streamAnswer(
        {
          host: '127.0.0.1',
          port,
          question: 'q',
          retrieval: false,
          answer: true,
          timeoutMs: 5000,
          startHint: '',
        },
        (t) => {
          written += t;
        },
      );
      expect(written).toBe('line one\u2028line two end [1]');
      expect(after).toContain(name);
    } finally {
      raw.close();
    }
    expect(eventField('event: line\r\ndata: {"a":"x\u2028y"}\rdata:z\n: comment', 'data')).toEqual([
      '{"a":"x\u2028y"}',
      'z',
    ]);
  });

  it("a server that is not noderag's: no answer field, an HTML error page, a stalled body, CRLF events", async () => {
    let mode = '';
    const raw = createServer((_req, res) => {
      if (mode === 'json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"ok"}');
      } else if (mode === 'html404') {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<html>Not Found</html>');
      } else if (mode === 'stall') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"answer":');
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ type: 'delta', text: 'crlf ' })}\r`);
        setTimeout(() => {
          res.end(
            `\n\r\ndata: ${JSON.stringify({ type: 'delta', text: 'works' })}\r\n\r\n` +
              `data: ${JSON.stringify({ type: 'done', sources: [], citations: [] })}\r\n\r\n`,
          );
        }, 20);
      }
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    const port = (raw.address() as { port: number }).port;
    const request = { host: '127.0.0.1', port, question: 'q', retrieval: false, answer: true, startHint: '' };
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => (e as CliExit).message,
      );
    try {
      mode = 'json';
      expect(await failure(askServer({ ...request, timeoutMs: 5000 }))).toBe(
        `The server at http://127.0.0.1:${port}/answer answered without "answer": it is not a noderag search server (or not one of this version).`,
      );
      mode = 'html404';
      const html = `The server at http://127.0.0.1:${port}/answer did not answer with JSON (status 404).`;
      expect(await failure(askServer({ ...request, timeoutMs: 5000 }))).toBe(html);
      expect(await failure(streamAnswer({ ...request, timeoutMs: 5000 }, () => undefined))).toBe(html);
      mode = 'stall';
      expect(await failure(askServer({ ...request, timeoutMs: 300 }))).toBe(
        `No reply from http://127.0.0.1:${port} within 0.3 s.`,
      );
      mode = 'crlf';
      let written = '';
      await streamAnswer({ ...request, timeoutMs: 5000 }, (t) => {
        written += t;
      });
      expect(written).toBe('crlf works');
    } finally {
      raw.closeAllConnections();
      raw.close();
    }
  });

  it('says how to start the server when nothing listens', async () => {
    const closed = await serveApp(createApp({ engine: {} as never }), { host: '127.0.0.1', port: 0 });
    const port = closed.port;
    await closed.close();
    const e = await ask('q', false, false, port).catch((x: unknown) => x);
    expect((e as CliExit).message).toBe(
      `No search server is running at http://127.0.0.1:${port}. Start it with: noderag search -f X`,
    );
    expect((e as CliExit).exitCode).toBe(1);
  });

  it('a connection reset, or a redirect, is said as such, not as "no server is running"', async () => {
    const reset = createNetServer((socket) => socket.destroy());
    await new Promise<void>((r) => reset.listen(0, '127.0.0.1', r));
    const redirect = createServer((_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' });
      res.end();
    });
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
    try {
      const resetPort = (reset.address() as AddressInfo).port;
      const e1 = (await ask('q', false, false, resetPort).catch((x: unknown) => x)) as CliExit;
      expect(e1).toBeInstanceOf(CliExit);
      expect(e1.exitCode).toBe(1);
      expect(e1.message).toMatch(
        new RegExp(`^the connection to http://127\\.0\\.0\\.1:${resetPort} failed \\(.+\\) before a reply`),
      );
      const redirectPort = (redirect.address() as AddressInfo).port;
      const e2 = (await ask('q', false, false, redirectPort).catch((x: unknown) => x)) as CliExit;
      expect(e2.message).toBe(
        `http://127.0.0.1:${redirectPort}/answer answered HTTP 302, a redirect to http://127.0.0.1:9/elsewhere: not a noderag search server (it never redirects); check --url, --port or config.url / config.port.`,
      );
    } finally {
      reset.close();
      redirect.closeAllConnections();
      redirect.close();
    }
  });
});
