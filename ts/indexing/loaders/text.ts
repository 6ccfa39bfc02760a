/**
 * Plain text and Markdown (docs/method.md §3.2): UTF-8 with any BOM removed, UTF-16 accepted when
 * it carries a BOM, anything else rejected as "not valid UTF-8" (no guessing of legacy
 * code pages: a wrong guess would index garbage silently). Markdown is kept verbatim.
 */
import { ExtractionFailure } from './failure.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf16le = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true });

/** Decode bytes by BOM (UTF-8, UTF-16 LE/BE), else strict UTF-8. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return decodeUtf8(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes.subarray(2), 'le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes.subarray(2), 'be');
  return decodeUtf8(bytes);
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new ExtractionFailure('not valid UTF-8', { cause: error });
  }
}

function decodeUtf16(bytes: Uint8Array, order: 'le' | 'be'): string {
  if (bytes.length % 2 !== 0) throw new ExtractionFailure('not valid UTF-16 (odd number of bytes)');
  let le = bytes;
  if (order === 'be') {
    // Swap to little-endian rather than rely on a 'utf-16be' decoder (absent in small-ICU builds).
    le = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i += 2) {
      le[i] = bytes[i + 1]!;
      le[i + 1] = bytes[i]!;
    }
  }
  try {
    return utf16le.decode(le);
  } catch (error) {
    throw new ExtractionFailure('not valid UTF-16', { cause: error });
  }
}

/**
 * Text of a .txt / .md file. A NUL character never occurs in text (UTF-8 or UTF-16 alike),
 * so one means a binary file with a text extension: refused rather than indexed as garbage
 * (the clean-up would otherwise drop the NULs and keep the rest).
 */
export function extractPlainText(bytes: Uint8Array): string {
  const text = decodeText(bytes);
  if (text.includes('\u0000')) throw new ExtractionFailure('binary file (contains NUL bytes), not text');
  return text;
}
