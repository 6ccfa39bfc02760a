/**
 * The native error codes are declared once in Rust (bindings/src/error.rs) and mirrored in
 * `NATIVE_CODES` (ts/native.ts), which picks the error class of each. The addon reports its
 * list, so the two cannot drift apart unnoticed.
 */
import { describe, expect, it } from 'vitest';
import { ClosedError, IndexFileError, InternalError, InvalidArgumentError } from '../../ts/errors.js';
import { callNative, NATIVE_CODES, native } from '../../ts/native.js';
import { readTable } from '../../ts/store/index.js';

/** The class each code becomes (ARCHITECTURE.md "The boundary"). */
const CLASS_OF: Record<string, new (...args: never[]) => Error> = {
  NATIVE_INVALID_ARGUMENT: InvalidArgumentError,
  NATIVE_IO: IndexFileError,
  NATIVE_CORRUPT_FILE: IndexFileError,
  NATIVE_DIMENSION_MISMATCH: IndexFileError,
  NATIVE_CLOSED: ClosedError,
  NATIVE_PANIC: InternalError,
  NATIVE_INTERNAL: InternalError,
};

describe('native error codes', () => {
  const rust = native.nativeErrorCodes();

  it('are the same list in Rust and in TypeScript', () => {
    expect(rust.length).toBeGreaterThan(0);
    expect(new Set(rust).size).toBe(rust.length);
    expect([...rust].sort()).toEqual(Object.values(NATIVE_CODES).sort());
  });

  it('each becomes its own error class with the code kept', () => {
    expect(Object.keys(CLASS_OF).sort()).toEqual([...rust].sort());
    for (const code of rust) {
      // What callNative does with an error the addon throws.
      let translated: unknown;
      try {
        callNative(() => {
          throw new Error(`${code}: something failed`);
        });
      } catch (e) {
        translated = e;
      }
      expect(translated, code).toBeInstanceOf(CLASS_OF[code]!);
      expect((translated as InternalError).code).toBe(code);
      expect((translated as Error).message).toBe('something failed');
    }
  });

  it('a real native failure arrives with a code of the list', async () => {
    const failure = await readTable('no-such-folder/none.parquet').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(IndexFileError);
    expect(rust).toContain((failure as IndexFileError).code);
  });
});
