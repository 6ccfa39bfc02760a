import { describe, expect, it } from 'vitest';
import { InternalError } from '../../ts/errors.js';
import { callNative, native } from '../../ts/native.js';

describe('addon', () => {
  it('loads and reports its version', () => {
    expect(native.nativeVersion()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('turns a Rust panic into a JS error instead of aborting Node', () => {
    let caught: unknown;
    try {
      callNative(() => native.debugPanic('boom'));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InternalError);
    expect((caught as InternalError).code).toBe('NATIVE_PANIC');
    expect((caught as InternalError).message).toContain('boom');
    // The process is still alive and the addon still works.
    expect(native.nativeVersion()).toBeTruthy();
  });
});
