/**
 * The web UI started with an API key (`noderag ui --api-key`), in headless Chromium: the page
 * loads, its first API calls are refused (401) and it shows the key field; once the key is
 * typed, the page's calls carry it (the config form fills, the status shows) and a reload
 * of the tab keeps it (sessionStorage). A wrong key is named as such.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserTests } from '../helpers/chromium.js';
import { CLI, REPO_ROOT } from '../helpers/project.js';
import { envWith } from '../helpers/search-server.js';

const KEY = 'ui-browser-key-0123456789';

let browser: Browser | undefined;
let child: ChildProcess | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  if (!skipBrowserTests) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  if (child?.exitCode === null) child.kill('SIGTERM');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function startUi(folder: string): Promise<{ url: string; out: () => string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', CLI, 'ui', '-f', folder, '--port', '0'], {
      cwd: REPO_ROOT,
      env: envWith({ NODERAG_API_KEY: KEY }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) resolve({ url: m[1]!, out: () => out });
    });
    proc.on('exit', (code) => reject(new Error(`ui exited with ${code}: ${out}`)));
  });
}

describe.skipIf(skipBrowserTests)('web UI with an API key, in headless Chromium', () => {
  it('asks for the key, then sends it on every call', async () => {
    const root = mkdtempSync(join(tmpdir(), 'noderag-ui-key-e2e-'));
    dirs.push(root);
    const folder = join(root, 'project');
    mkdirSync(folder);
    const ui = await startUi(folder);
    expect(ui.out()).toContain('API key required');
    expect(ui.out()).not.toContain(KEY);
    expect((await fetch(`${ui.url}/api/status`)).status).toBe(401);

    const page = await (await browser!.newContext()).newPage();
    await page.goto(`${ui.url}/`);
    const keyBox = page.locator('#key-box');
    const providerOptions = page.locator('select[name="model_config.service_provider"] option');
    await keyBox.waitFor({ state: 'visible' });
    expect(await providerOptions.count()).toBe(0);
    await page.locator('#key-message').filter({ hasText: 'API key' }).waitFor();

    await page.fill('#api-key', 'a-wrong-key-0123456789');
    await page.locator('#api-key').dispatchEvent('change');
    await page.locator('#key-message').filter({ hasText: 'not valid' }).waitFor();

    await page.fill('#api-key', KEY);
    await page.locator('#api-key').dispatchEvent('change');
    // The config form fills from GET /api/config, which needs the key.
    await providerOptions.first().waitFor({ state: 'attached' });
    await page.locator('#status').filter({ hasText: 'Not built' }).waitFor();

    await page.reload();
    expect(await page.inputValue('#api-key')).toBe(KEY);
    await providerOptions.first().waitFor({ state: 'attached' });
  }, 60_000);
});
