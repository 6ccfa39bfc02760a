import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InternalError } from '../../ts/errors.js';
import { callNative, native } from '../../ts/native.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Built by `npm run build:native:testing` (scripts/build-testing-addon.mjs), part of npm test. */
const TESTING_ADDON = join(REPO, 'target', 'testing-addon', 'noderag.node');
const hasTestingAddon = existsSync(TESTING_ADDON);
// Like the browser tests: skipped on a developer machine without it, required under CI=true.
const runPanicTest = hasTestingAddon || process.env.CI === 'true';

describe('addon', () => {
  it('loads and reports its version', () => {
    expect(native.nativeVersion()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('has no test-only entry points in the installed build', () => {
    expect('debugPanic' in native).toBe(false);
  });

  it.skipIf(!runPanicTest)('turns a Rust panic into a JS error instead of aborting Node', () => {
    expect(hasTestingAddon, `${TESTING_ADDON} is missing: run npm run build:native:testing`).toBe(true);
    const testing = createRequire(import.meta.url)(TESTING_ADDON) as {
      debugPanic(message: string): void;
      nativeVersion(): string;
    };
    let caught: unknown;
    try {
      callNative(() => testing.debugPanic('boom'));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InternalError);
    expect((caught as InternalError).code).toBe('NATIVE_PANIC');
    expect((caught as InternalError).message).toContain('boom');
    // The process is still alive and the addon still works.
    expect(testing.nativeVersion()).toBe(native.nativeVersion());
  });
});
