/**
 * A text file that must be UTF-8 (Node_config.yaml, an eval questions file): its text, or why
 * it is not UTF-8 text, naming the file. Decoded loosely, a UTF-16 file became garbage with NUL
 * bytes and a Latin-1 byte a silent U+FFFD (an answer "Malmö" that could never match).
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export type Utf8Text = { ok: true; text: string } | { ok: false; problem: string; cause?: unknown };

/** The text of `bytes` read from `path` (a UTF-8 byte-order mark removed). */
export function decodeUtf8Text(bytes: Uint8Array, path: string): Utf8Text {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return { ok: false, problem: `${path} is UTF-16 text; save it as UTF-8` };
  // Valid UTF-8, but no text file of ours holds a NUL: UTF-16 saved without a byte-order mark.
  if (bytes.includes(0))
    return {
      ok: false,
      problem: `${path} contains NUL bytes (UTF-16 text without a byte-order mark?); save it as UTF-8`,
    };
  try {
    return { ok: true, text: UTF8.decode(bytes).replace(/^\uFEFF/, '') };
  } catch (e) {
    return {
      ok: false,
      problem: `${path} is not UTF-8 text (Latin-1 or another encoding?); save it as UTF-8`,
      cause: e,
    };
  }
}
