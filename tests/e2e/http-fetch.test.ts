/**
 * The openai adapter's fetch (ts/llm/http-fetch.ts, node:http) against servers on 127.0.0.1:
 * what the SDK relies on of fetch (status, headers, whole and streamed bodies, aborts,
 * network errors) plus redirects, compressed replies and a reply slower than usual.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from '../../ts/llm/http-fetch.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

const routes = new Map<string, Handler>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const handler = routes.get(req.url ?? '');
      if (!handler) {
        res.writeHead(404).end();
        return;
      }
      handler(req, Buffer.concat(chunks).toString('utf8'), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set('/echo', (req, body, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-test': 'yes' });
    res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }));
  });
  routes.set('/bom', (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"é":"ü ✓"}')]));
  });
  routes.set('/slow', (_req, _body, res) => {
    setTimeout(() => res.end('{"ok":true}'), 1500);
  });
  routes.set('/gzip', (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync('{"zipped":true}'));
  });
  routes.set('/keep', (_req, _body, res) => {
    res.writeHead(307, { location: '/echo' }).end();
  });
  // The same server under another origin (localhost instead of 127.0.0.1).
  routes.set('/elsewhere', (_req, _body, res) => {
    res.writeHead(307, { location: `${base.replace('127.0.0.1', 'localhost')}/echo` }).end();
  });
  routes.set('/see-other', (_req, _body, res) => {
    res.writeHead(303, { location: `${base}/echo` }).end();
  });
  routes.set('/events', (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    // The rest only after the client has read the first event.
    setTimeout(() => res.end('data: two\n\n'), 300);
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (path: string, init: RequestInit = {}) =>
  httpFetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: '{"x":1}',
    ...init,
  });

describe('httpFetch', () => {
  it('sends method, headers and body; returns status, headers and the whole body', async () => {
    const res = await post('/echo');
    expect(res.status).toBe(201);
    expect(res.headers.get('x-test')).toBe('yes');
    expect(await res.json()).toEqual({ method: 'POST', body: '{"x":1}', auth: 'Bearer k' });
  });

  it('a whole reply reads as a Response does: once, UTF-8 without its BOM, or through body', async () => {
    const url = `${base}/bom`;
    const [ours, theirs] = [await httpFetch(url), await fetch(url)];
    expect(ours).toBeInstanceOf(Response);
    expect(ours.bodyUsed).toBe(false);
    const copy = ours.clone();
    expect(await ours.text()).toBe(await theirs.text());
    expect(ours.bodyUsed).toBe(true);
    await expect(ours.text()).rejects.toThrow(TypeError);
    await expect(ours.json()).rejects.toThrow(TypeError);
    expect(() => ours.clone()).toThrow(TypeError);
    expect(await copy.json()).toEqual({ é: 'ü ✓' });
    const bytes = new Uint8Array(await (await httpFetch(url)).arrayBuffer());
    expect(Buffer.from(bytes)).toEqual(Buffer.from(await (await fetch(url)).arrayBuffer()));
    // Through `body`: the stream holds the bytes; reading it uses the body up.
    const streamed = await httpFetch(url);
    const reader = (streamed.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(bytes));
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.text()).rejects.toThrow(TypeError);
    // `body` handed out but not read: text() reads it.
    const handed = await httpFetch(url);
    expect(handed.body).not.toBeNull();
    expect(await handed.json()).toEqual({ é: 'ü ✓' });
  });

  it('waits for a reply whose headers come late (no limit of its own)', async () => {
    const res = await httpFetch(`${base}/slow`);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('rejects with the abort reason, before or during the request', async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('stop')), 50);
    await expect(httpFetch(`${base}/slow`, { signal: ctl.signal })).rejects.toThrow('stop');
    await expect(httpFetch(`${base}/echo`, { signal: ctl.signal })).rejects.toThrow('stop');
  });

  it('decodes a gzip reply', async () => {
    const res = await httpFetch(`${base}/gzip`);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.json()).toEqual({ zipped: true });
  });

  it('follows redirects: 307 keeps the POST and its body, 303 turns it into a GET', async () => {
    expect(await (await post('/keep')).json()).toMatchObject({ method: 'POST', body: '{"x":1}' });
    expect(await (await post('/see-other')).json()).toMatchObject({ method: 'GET', body: '' });
  });

  it('keeps the API key on a redirect within the origin, and drops it on one to another origin', async () => {
    expect(await (await post('/keep')).json()).toMatchObject({ auth: 'Bearer k' });
    expect(await (await post('/elsewhere')).json()).toMatchObject({ method: 'POST', auth: null });
  });

  it('hands a text/event-stream reply over as a stream, and an abort ends it with the reason', async () => {
    const res = await httpFetch(`${base}/events`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('data: one\n\n');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += Buffer.from(r.value).toString();
    expect(rest).toBe('data: two\n\n');

    const ctl = new AbortController();
    const cut = await httpFetch(`${base}/events`, { signal: ctl.signal });
    const r2 = (cut.body as ReadableStream<Uint8Array>).getReader();
    await r2.read();
    ctl.abort(new Error('left early'));
    await expect(r2.read()).rejects.toThrow('left early');
  });

  it('a refused connection is a TypeError whose cause has the network code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await httpFetch(`http://127.0.0.1:${port}/`).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(TypeError);
    expect((e as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });
});
