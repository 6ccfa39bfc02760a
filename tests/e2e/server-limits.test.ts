/**
 * Request refusals of the real `noderag search` process (issue 18 leftovers): a body over
 * the limit, chunked or with a Content-Length, gets its JSON 413 and then a clean close
 * (answer, then close: no reset while the client is still sending), every time; an invalid
 * "stream" on /retrieval is a 400 as on /answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';
import { envWith, freePort, killAll, type Served, serve, stop } from '../helpers/search-server.js';

interface RawReply {
  text: string;
  /** The socket's error code, if it ended on one (EPIPE, ECONNRESET) rather than a close. */
  error: string | null;
}

/** Sends a 4 MB body to /answer as fast as the socket takes it; reads until the server closes. */
function oversize(port: number, chunked: boolean): Promise<RawReply> {
  return new Promise((done) => {
    const sock = connect(port, '127.0.0.1');
    let text = '';
    let error: string | null = null;
    sock.on('data', (d) => {
      text += d;
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    sock.on('close', () => done({ text, error }));
    const body = Buffer.alloc(4_000_000, 'a');
    const head = [
      'POST /answer HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Connection: close',
      'Content-Type: application/json',
      chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`,
    ];
    sock.write(`${head.join('\r\n')}\r\n\r\n`);
    if (!chunked) {
      sock.end(body);
      return;
    }
    for (let at = 0; at < body.length; at += 64 * 1024) {
      const c = body.subarray(at, at + 64 * 1024);
      sock.write(`${c.length.toString(16)}\r\n`);
      sock.write(c);
      sock.write('\r\n');
    }
    sock.end('0\r\n\r\n');
  });
}

describe('refusals of the search server', () => {
  let server: Served;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'noderag-limits-e2e-'));
    const port = await freePort();
    await writeSearchProject(root, curieSpec({ config: { port } }));
    server = await serve(root, [], envWith());
  });
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
    killAll();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers a body over the limit with its 413, then closes cleanly', async () => {
    const port = Number(new URL(server.url).port);
    for (const chunked of [true, false, true, false, true, false]) {
      const r = await oversize(port, chunked);
      expect(r.text.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(r.text).toMatch(/connection: close/i);
      const json = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
      expect(json.error.code).toBe('payload_too_large');
      expect(r.error, `chunked=${chunked}`).toBeNull();
    }
    // The server still answers.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('an error reply to a request without a body keeps the connection open', async () => {
    const port = Number(new URL(server.url).port);
    // Two requests on one socket: a 404 GET, then /health.
    const text = await new Promise<string>((done) => {
      const sock = connect(port, '127.0.0.1');
      let got = '';
      sock.on('data', (d) => {
        got += d;
        if ((got.match(/HTTP\/1\.1 /g) ?? []).length === 2 && got.trimEnd().endsWith('}')) sock.end();
      });
      sock.on('close', () => done(got));
      const host = `Host: 127.0.0.1:${port}`;
      sock.write(`GET /nope HTTP/1.1\r\n${host}\r\n\r\nGET /health HTTP/1.1\r\n${host}\r\n\r\n`);
    });
    const replies = text.split(/(?=HTTP\/1\.1 )/);
    expect(replies.map((r) => r.split('\r\n')[0])).toEqual(['HTTP/1.1 404 Not Found', 'HTTP/1.1 200 OK']);
    expect(replies[0]).not.toMatch(/connection: close/i);
  });

  it('refuses an invalid "stream" on /retrieval as /answer does', async () => {
    for (const path of ['/retrieval', '/answer']) {
      const r = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'Where was Marie Curie born?', stream: 'yes' }),
      });
      expect(r.status).toBe(400);
      const { error } = (await r.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_stream');
      expect(error.message).toContain('"stream" must be true or false');
    }
    const ok = await fetch(`${server.url}/retrieval`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Where was Marie Curie born?', stream: false }),
    });
    expect(ok.status).toBe(200);
  });
});
