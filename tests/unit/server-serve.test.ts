import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, ServerStartError, serveApp } from '../../ts/server/serve.js';

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
