/**
 * Headless Chromium for browser tests: Debian's `chromium` package driven by playwright-core
 * (no browser download). .ci/run installs the package; on a machine without it the browser
 * tests are skipped, except under CI=true where a missing browser is a failure.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.NODERAG_CHROMIUM ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM_PATH);
export const skipBrowserTests = !chromiumAvailable && process.env.CI !== 'true';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
