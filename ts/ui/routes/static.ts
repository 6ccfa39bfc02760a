/**
 * The page and its files, read once from ./public (next to this folder in the source tree and
 * in dist/, where `npm run build:ts` copies it): `/` is index.html, `/assets/<name>` the other
 * files, `/favicon.ico` the icon the page also declares. Nothing else is served from disk.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'hono';
import { Hono } from 'hono';

/** The folder of the page's files. */
export const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

/** The servable types (all text). */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const HEADERS = {
  'cache-control': 'no-store',
  // Only the app's own script and style; no inline code, nothing from elsewhere.
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
};

interface PublicFile {
  body: string;
  type: string;
}

/** Every servable file of `dir` by name (only the known types; no sub-folders). */
export function readPublicFiles(dir: string = PUBLIC_DIR): Map<string, PublicFile> {
  const files = new Map<string, PublicFile>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new Error(
      `the web UI's files are missing (${dir}: ${(e as NodeJS.ErrnoException).code ?? e}); reinstall noderag, or run npm run build:ts in a clone`,
    );
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { body: readFileSync(join(dir, name), 'utf8'), type });
  }
  for (const needed of ['index.html', 'app.js', 'app.css', 'favicon.svg']) {
    if (!files.has(needed)) throw new Error(`the web UI's ${needed} is missing from ${dir}`);
  }
  return files;
}

export function staticRoutes(files: Map<string, PublicFile>): Hono {
  const send = (c: Context, name: string) => {
    const f = files.get(name);
    if (!f || name === 'index.html') return c.notFound();
    return c.body(f.body, 200, { ...HEADERS, 'content-type': f.type });
  };
  const page = files.get('index.html')!;
  return new Hono()
    .get('/', (c) => c.body(page.body, 200, { ...HEADERS, 'content-type': page.type }))
    .get('/assets/:name', (c) => send(c, c.req.param('name')))
    .get('/favicon.ico', (c) => send(c, 'favicon.svg'));
}
