/**
 * A streaming reader of `multipart/form-data` bodies (RFC 7578): each part's headers are
 * parsed, then its bytes are handed to a sink as they arrive, so an upload is never held in
 * memory whole. At most one delimiter's length of a part is buffered between chunks.
 */
import { HttpError } from './http.js';

/** The headers of one part, as far as a form upload needs them. */
export interface PartInfo {
  /** The form field (`name` of Content-Disposition). */
  name: string | undefined;
  /** The file name, for a file field (`filename`, or `filename*` when given). */
  filename: string | undefined;
}

/** Where a part's bytes go; `end` is called after the last one. */
export interface PartSink {
  write(chunk: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

/** Longest header block of one part. */
const MAX_HEADER_BYTES = 16 * 1024;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

function malformed(what: string): HttpError {
  return new HttpError(400, 'invalid_body', `the multipart body is malformed: ${what}`);
}

/** The boundary of a `multipart/form-data` Content-Type, or null for any other type. */
export function multipartBoundary(contentType: string | undefined): string | null {
  const [mime, ...params] = (contentType ?? '').split(';');
  if (mime!.trim().toLowerCase() !== 'multipart/form-data') return null;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let value = p.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    // RFC 2046: 1 to 70 characters.
    return value.length >= 1 && value.length <= 70 ? value : null;
  }
  return null;
}

/** The parameters of a Content-Disposition value (`form-data; name="file"; filename="a.txt"`). */
export function dispositionParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const m of value.matchAll(re)) {
    const key = m[1]!.toLowerCase();
    // `filename="abc.txt` (no closing quote) would otherwise be kept as `"abc.txt`.
    if (m[3]?.trimStart().startsWith('"')) throw malformed(`the quoted ${key} is not closed`);
    const raw = m[2] !== undefined ? m[2].replace(/\\(["\\])/g, '$1') : m[3]!.trim();
    out.set(key, raw);
  }
  return out;
}

/**
 * The part's file name. Browsers send it raw in UTF-8 with `"`, CR and LF written as %22,
 * %0D and %0A (the HTML form-data encoding); `filename*=UTF-8''…` (RFC 5987) wins when given.
 */
function fileNameOf(params: Map<string, string>): string | undefined {
  const extended = params.get('filename*');
  if (extended !== undefined) {
    const m = /^utf-8'[^']*'(.*)$/i.exec(extended);
    if (m) {
      try {
        return decodeURIComponent(m[1]!);
      } catch {
        throw malformed('filename* is not valid percent-encoded UTF-8');
      }
    }
  }
  const plain = params.get('filename');
  // A filename* in another charset, alone: refused, not taken for a part without a file.
  if (plain === undefined && extended !== undefined) {
    throw malformed("filename* must be in UTF-8 (filename*=UTF-8''…)");
  }
  if (plain === undefined) return undefined;
  return plain.replace(/%(22|0D|0A)/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function partInfo(headerBlock: string): PartInfo {
  let disposition: string | undefined;
  for (const line of headerBlock.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed('a part header line has no name');
    if (line.slice(0, colon).trim().toLowerCase() === 'content-disposition') {
      disposition = line.slice(colon + 1).trim();
    }
  }
  if (disposition === undefined) throw malformed('a part has no Content-Disposition');
  const params = dispositionParams(disposition);
  return { name: params.get('name'), filename: fileNameOf(params) };
}

/**
 * Reads a multipart body from `source`, calling `onPart` for each part with its headers; the
 * part's bytes go to the sink it returns (null: the part is skipped). Resolves after the
 * closing delimiter; a truncated or malformed body is a 400 `invalid_body`. An error thrown
 * by `onPart` or a sink stops the reading and leaves the rest of the source unread.
 */
export async function readMultipart(
  source: AsyncIterable<Uint8Array>,
  boundary: string,
  onPart: (info: PartInfo) => Promise<PartSink | null>,
): Promise<void> {
  // The first delimiter may open the body, without the CRLF that precedes the others.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const iterator = source[Symbol.asyncIterator]();
  let buf: Buffer = Buffer.from('\r\n');
  let ended = false;
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      return false;
    }
    buf = buf.length === 0 ? Buffer.from(next.value) : Buffer.concat([buf, next.value]);
    return true;
  };
  try {
    // Preamble: everything before the first delimiter is ignored.
    for (;;) {
      const at = buf.indexOf(delimiter);
      if (at >= 0) {
        buf = buf.subarray(at + delimiter.length);
        break;
      }
      buf = buf.subarray(Math.max(0, buf.length - delimiter.length + 1));
      if (!(await more())) throw malformed(`no "--${boundary}" delimiter`);
    }
    for (;;) {
      // After a delimiter: "--" closes the body, else the rest of the line must be blank.
      while (buf.length < 2) if (!(await more())) throw malformed('it ends inside a delimiter line');
      if (buf[0] === 0x2d && buf[1] === 0x2d) {
        // The epilogue is ignored, but read (within the source's limit) so the request ends.
        do buf = Buffer.alloc(0);
        while (await more());
        return;
      }
      let eol = buf.indexOf('\r\n');
      while (eol < 0) {
        if (buf.length > 1024 || !(await more())) throw malformed('a delimiter line does not end');
        eol = buf.indexOf('\r\n');
      }
      if (buf.subarray(0, eol).toString('latin1').trim() !== '') throw malformed('text after a delimiter');
      buf = buf.subarray(eol + 2);

      // The part's headers, up to the empty line.
      let headerEnd = buf.subarray(0, 2).equals(Buffer.from('\r\n')) ? 0 : buf.indexOf('\r\n\r\n');
      while (headerEnd < 0 || buf.length < 2) {
        if (buf.length > MAX_HEADER_BYTES) throw malformed('a part header is longer than 16 KiB');
        if (!(await more())) throw malformed('it ends inside a part header');
        headerEnd = buf.subarray(0, 2).equals(Buffer.from('\r\n')) ? 0 : buf.indexOf('\r\n\r\n');
      }
      // Also when the whole header came in one chunk.
      if (headerEnd > MAX_HEADER_BYTES) throw malformed('a part header is longer than 16 KiB');
      let headers: string;
      try {
        // Strict: a name in another encoding would be written under U+FFFD characters.
        headers = STRICT_UTF8.decode(buf.subarray(0, headerEnd));
      } catch {
        throw malformed('a part header is not valid UTF-8 (file names are sent in UTF-8)');
      }
      const info = partInfo(headers);
      buf = buf.subarray(headerEnd === 0 ? 2 : headerEnd + 4);

      // The part's bytes, up to the next delimiter. A possible start of the delimiter at the
      // end of the buffer is kept back until the next chunk shows whether it is one.
      const sink = await onPart(info);
      const keep = delimiter.length - 1;
      for (;;) {
        const at = buf.indexOf(delimiter);
        if (at >= 0) {
          if (sink && at > 0) await sink.write(buf.subarray(0, at));
          buf = buf.subarray(at + delimiter.length);
          break;
        }
        if (buf.length > keep) {
          if (sink) await sink.write(buf.subarray(0, buf.length - keep));
          buf = buf.subarray(buf.length - keep);
        }
        if (!(await more())) throw malformed('it ends inside a part');
      }
      await sink?.end();
    }
  } finally {
    // Stop the source (a Node request is paused, a web stream cancelled), not drain it.
    if (!ended) await iterator.return?.();
  }
}
