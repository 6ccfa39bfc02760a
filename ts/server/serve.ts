/**
 * Binds a Hono app to a TCP port with @hono/node-server. Refuses to start with a clear
 * message when the port is taken; `close()` stops accepting and lets in-flight requests
 * finish for up to `graceMs` (docs/method.md §7.2: 10 s) before closing remaining sockets.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { NodeRagError } from '../errors.js';

export interface ServeOptions {
  host: string;
  port: number;
  graceMs?: number;
  /** Where the port and address come from, for the refusal (default: config.port / config.url). */
  settings?: { port: string; host: string };
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export class ServerStartError extends NodeRagError {}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

export function serveApp(app: Hono, opts: ServeOptions): Promise<RunningServer> {
  const settings = opts.settings ?? { port: 'config.port', host: 'config.url' };
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }) as Server;
    const onError = (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') {
        reject(
          new ServerStartError(
            'port_in_use',
            `port ${opts.port} on ${opts.host} is already in use; stop the other process or set ${settings.port}`,
          ),
        );
      } else if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') {
        reject(
          new ServerStartError(
            'bad_address',
            `cannot listen on ${opts.host}: ${e.code}; check ${settings.host}`,
          ),
        );
      } else reject(e);
    };
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      const port = (server.address() as AddressInfo).port;
      const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () => closeGracefully(server, opts.graceMs ?? 10_000),
      });
    });
  });
}

function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    // Keep-alive sockets become idle when their response ends; close them as they do.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    timer.unref();
    sweep.unref();
    server.close(() => {
      clearTimeout(timer);
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
