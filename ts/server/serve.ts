/**
 * Binds a Hono app to a TCP port with @hono/node-server. Refuses to start with a clear
 * message when the port is taken; `close()` stops accepting and lets in-flight requests
 * finish for up to `graceMs` (docs/method.md §7.2: 10 s) before closing remaining sockets.
 *
 * `serveHandedSockets` is the same app on a server that listens on nothing: a `--workers`
 * primary accepts the connections and hands each socket to the worker with the fewest open
 * ones (ts/cli/search-cluster.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError } from '@hono/node-server';
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
const DEFAULT_GRACE_MS = 10_000;

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/** A JSON error body, as the app's own errors have (ts/server/http.ts). */
function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/**
 * The app on a node:http server (what @hono/node-server's `serve` makes), where the requests
 * that never reach the app get a JSON error too: those the adapter cannot turn into a web
 * Request (a Host or path that makes no URL), and those node:http cannot parse (bad syntax,
 * headers too large, too slow). Both used to be answered with an empty body.
 */
function appServer(app: Hono, hostname?: string): Server {
  const listener = getRequestListener(app.fetch, {
    ...(hostname ? { hostname } : {}),
    // A RequestError is a request the adapter could not read; anything else escaped the
    // app's own error handler (a bug): 500, logged, as the adapter's default does.
    errorHandler: (e) => {
      const bad = e instanceof RequestError;
      if (!bad) console.error(e);
      return new Response(
        bad
          ? errorBody('bad_request', "the request's Host or path does not make a valid URL")
          : errorBody('internal_error', 'internal error; see the server log'),
        { status: bad ? 400 : 500, headers: { 'content-type': 'application/json', connection: 'close' } },
      );
    },
  });
  const server = createServer(listener);
  server.on('clientError', answerClientError);
  return server;
}

/** node:http's own answers to a request it cannot parse (its default), with a JSON body. */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const sent = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || sent) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request_timeout', 'the request was not received in time']
        : [400, 'Bad Request', 'bad_request', 'the request is not valid HTTP'];
  const body = errorBody(code, message);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function serveApp(app: Hono, opts: ServeOptions): Promise<RunningServer> {
  const server = appServer(app, opts.host);
  server.listen(opts.port, opts.host);
  return whenListening(server, opts).then(({ url, port }) => ({
    url,
    port,
    close: () => closeGracefully(server, opts.graceMs ?? DEFAULT_GRACE_MS),
  }));
}

/**
 * Resolves with the address once `server` (already asked to listen on opts.host:opts.port)
 * listens; a taken port or a bad address rejects with a ServerStartError that names the
 * setting to change.
 */
export function whenListening(server: NetServer, opts: ServeOptions): Promise<{ url: string; port: number }> {
  const settings = opts.settings ?? { port: 'config.port', host: 'config.url' };
  return new Promise((resolve, reject) => {
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
            `cannot listen on ${opts.host}: ${e.code === 'ENOTFOUND' ? 'no such host name (ENOTFOUND)' : 'not an address of this machine (EADDRNOTAVAIL)'}; check ${settings.host}`,
          ),
        );
      } else reject(e);
    };
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      const port = (server.address() as AddressInfo).port;
      const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
      resolve({ url: `http://${host}:${port}`, port });
    });
  });
}

/** The app on a server without a port: it serves the sockets given to `adopt`. */
export interface HandedSocketServer {
  /** Serves `socket` (accepted elsewhere, paused); `onClose` runs when it closes. */
  adopt(socket: Socket, onClose: () => void): void;
  /** Stops taking sockets; in-flight requests get up to graceMs, then every socket closes. */
  close(): Promise<void>;
}

export function serveHandedSockets(app: Hono, graceMs = DEFAULT_GRACE_MS): HandedSocketServer {
  const server = appServer(app);
  // node:http starts its list of connections (closeIdleConnections) and its header and
  // request timeout checks on 'listening'; this server never listens, so it is told.
  server.emit('listening');
  // net.Server counts only the connections it accepted itself, so its 'close' would not
  // wait for these: the sockets are tracked here.
  const open = new Set<Socket>();
  let closing = false;
  return {
    adopt(socket, onClose) {
      if (closing) {
        socket.destroy();
        onClose();
        return;
      }
      open.add(socket);
      socket.once('close', () => {
        open.delete(socket);
        onClose();
      });
      server.emit('connection', socket);
      socket.resume();
    },
    close() {
      closing = true;
      return new Promise((resolve) => {
        const done = () => {
          if (open.size > 0) return;
          clearInterval(sweep);
          clearTimeout(timer);
          server.close(); // stops node:http's timeout checks
          resolve();
        };
        const timer = setTimeout(() => {
          for (const s of open) s.destroy();
        }, graceMs);
        // Keep-alive sockets become idle when their response ends; close them as they do.
        const sweep = setInterval(() => {
          server.closeIdleConnections();
          done();
        }, 50);
        timer.unref();
        server.closeIdleConnections();
        done();
      });
    },
  };
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
