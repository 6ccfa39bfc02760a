/**
 * The streaming multipart reader of the UI's uploads: bodies as fetch's FormData encodes them,
 * fed in every split (byte by byte, delimiters cut anywhere), file names with the form-data
 * escapes, and malformed bodies refused with 400.
 */
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../ts/server/http.js';
import { dispositionParams, multipartBoundary, readMultipart } from '../../ts/server/multipart.js';

interface Got {
  name: string | undefined;
  filename: string | undefined;
  bytes: Buffer;
}

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function parse(bytes: Uint8Array, boundary: string, size = bytes.length): Promise<Got[]> {
  const parts: Got[] = [];
  await readMultipart(chunked(bytes, Math.max(1, size)), boundary, async (info) => {
    const got: Got = { ...info, bytes: Buffer.alloc(0) };
    parts.push(got);
    return {
      write: async (chunk) => {
        got.bytes = Buffer.concat([got.bytes, chunk]);
      },
      end: async () => {},
    };
  });
  return parts;
}

/** A body exactly as fetch encodes the FormData, with its boundary. */
async function encode(form: FormData): Promise<{ bytes: Uint8Array; boundary: string }> {
  const res = new Response(form);
  const boundary = multipartBoundary(res.headers.get('content-type') ?? '');
  if (!boundary) throw new Error('no boundary');
  return { bytes: new Uint8Array(await res.arrayBuffer()), boundary };
}

describe('readMultipart', () => {
  it('reads what FormData sends, whatever the chunk sizes', async () => {
    const binary = new Uint8Array(3000).map((_, i) => (i * 7) % 256);
    // Content that holds CRLFs, dashes and a near-delimiter must come back byte for byte.
    const tricky = '\r\n--\r\n--not-the-boundary\r\n\r\n';
    const form = new FormData();
    form.append('note', 'a plain field');
    form.append('file', new File([binary], 'data.txt'));
    form.append('file', new File([tricky], 'tricky.md'));
    form.append('file', new File([''], 'empty.txt'));
    const { bytes, boundary } = await encode(form);
    for (const size of [1, 2, 3, 7, 64, 1000, bytes.length]) {
      const parts = await parse(bytes, boundary, size);
      expect(
        parts.map((p) => [p.name, p.filename]),
        `size ${size}`,
      ).toEqual([
        ['note', undefined],
        ['file', 'data.txt'],
        ['file', 'tricky.md'],
        ['file', 'empty.txt'],
      ]);
      expect(parts[0]!.bytes.toString()).toBe('a plain field');
      expect(Buffer.compare(parts[1]!.bytes, Buffer.from(binary))).toBe(0);
      expect(parts[2]!.bytes.toString()).toBe(tricky);
      expect(parts[3]!.bytes.length).toBe(0);
    }
  });

  it('gives back file names with quotes, new lines and non-ASCII characters', async () => {
    const names = ['a"b.txt', 'line\nbreak.txt', 'Zürich – 東京.md', 'semi;colon=x.txt'];
    const form = new FormData();
    for (const n of names) form.append('file', new File(['x'], n));
    const { bytes, boundary } = await encode(form);
    expect((await parse(bytes, boundary, 5)).map((p) => p.filename)).toEqual(names);
  });

  it('skips the preamble and the epilogue; a part the caller skips is read past', async () => {
    const body = Buffer.from(
      'preamble\r\n--B\r\nContent-Disposition: form-data; name="skip"\r\n\r\nignored\r\n--B\r\n' +
        'Content-Disposition: form-data; name="file"; filename="k.txt"\r\n\r\nkept\r\n--B--\r\nepilogue',
    );
    const kept: string[] = [];
    await readMultipart(chunked(body, 4), 'B', async (info) => {
      if (info.name === 'skip') return null;
      return {
        write: async (c) => {
          kept.push(Buffer.from(c).toString());
        },
        end: async () => {},
      };
    });
    expect(kept.join('')).toBe('kept');
  });

  it('refuses truncated and malformed bodies with 400 invalid_body', async () => {
    const cases = [
      'no delimiter at all',
      '--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nno closing delimiter',
      '--B\r\nContent-Disposition: form-data; name="file"\r\n',
      '--B\r\nNo-Colon-Here\r\n\r\nx\r\n--B--',
      '--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--',
      '--Bjunk\r\n\r\n--B--',
      // An unclosed quote, a filename* in another charset alone.
      '--B\r\nContent-Disposition: form-data; name="file"; filename="abc.txt\r\n\r\nx\r\n--B--',
      '--B\r\nContent-Disposition: form-data; name="file"; filename*=iso-8859-1\'\'caf%E9.txt\r\n\r\nx\r\n--B--',
    ];
    // A file name in bytes that are not UTF-8 (FF FE).
    const latin = Buffer.concat([
      Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('.txt"\r\n\r\nx\r\n--B--'),
    ]);
    for (const body of [...cases.map((text) => Buffer.from(text)), latin]) {
      const err = await parse(body, 'B', 3).catch((e: unknown) => e);
      expect(err, body.toString()).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(400);
      expect((err as HttpError).code).toBe('invalid_body');
    }
  });

  it('stops reading the source when a sink refuses', async () => {
    let pulled = 0;
    async function* source(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n');
      for (;;) {
        pulled++;
        yield Buffer.alloc(100, 120);
      }
    }
    let size = 0;
    const err = await readMultipart(source(), 'B', async () => ({
      write: async (c) => {
        size += c.byteLength;
        if (size > 1000) throw new Error('too large');
      },
      end: async () => {},
    })).catch((e: unknown) => e);
    expect(String(err)).toContain('too large');
    expect(pulled).toBeLessThan(20);
  });
});

describe('multipart headers', () => {
  it('finds the boundary of multipart/form-data only', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc');
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b c"')).toBe('a b c');
    expect(multipartBoundary('multipart/form-data')).toBeNull();
    expect(multipartBoundary('application/json')).toBeNull();
    expect(multipartBoundary(undefined)).toBeNull();
    expect(multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBeNull();
  });

  it('parses Content-Disposition parameters, quoted or not', () => {
    const p = dispositionParams('form-data; name="file"; filename="a\\"b;c.txt"; other=plain');
    expect(Object.fromEntries(p)).toEqual({ name: 'file', filename: 'a"b;c.txt', other: 'plain' });
  });
});
