/**
 * The response cache on disk (docs/method.md §3.10), two append-only files in
 * `cache/response_cache/`:
 *
 * - `llm.jsonl`: one line per validated reply: {key, provider, model, kind, created_at, response}.
 * - `embeddings.bin`: records of a 32-byte key, a u32 LE length, then that many float32 LE.
 *
 * Crash safety: each entry is handed to the kernel with one write() as soon as it is stored,
 * so killing the process loses at most the entry being written; files are fsynced at least
 * once a second (and on close) against power loss. On open, a torn last record (a line
 * without its newline, a record shorter than its length) is cut off before anything is
 * appended, so it can never end up in the middle of the file. Deleting the folder is safe.
 *
 * Replies are held in memory; embedding records only by file offset and read on demand, so
 * a large cache costs little memory. One process writes a cache at a time (the build lock).
 */
import {
  closeSync,
  copyFileSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import type { CacheKind } from './cache-key.js';

/** Decodes a reply line, throwing on bytes that are not UTF-8 (the line is then skipped). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
export const REPLIES_FILE = 'llm.jsonl';
export const EMBEDDINGS_FILE = 'embeddings.bin';
const KEY_BYTES = 32;
const HEADER_BYTES = KEY_BYTES + 4;
/** A length beyond this is not a vector of any real model: the record is damaged. */
const MAX_VECTOR_LENGTH = 1 << 16;
const LITTLE_ENDIAN = endianness() === 'LE';

interface ReplyMeta {
  provider: string;
  model: string;
  kind: CacheKind;
}

export interface ResponseCacheOptions {
  /** How often dirty files are fsynced (default 1000 ms; §3.10 asks for at least once a second). */
  fsyncIntervalMs?: number;
}

export interface CacheLoadReport {
  replies: number;
  embeddings: number;
  /** Bytes cut from the end of each file because the last record was torn. */
  truncatedBytes: { replies: number; embeddings: number };
  /** Complete lines that were not valid records (skipped). */
  skippedLines: number;
  /** Damaged embedding records inside the file (skipped; the records after them are kept). */
  skippedRecords: number;
  /**
   * Bytes cut from the end of embeddings.bin that were more than a torn last record (a
   * damaged record with no whole record found after it): the file as it was is kept beside
   * it as embeddings.bin.damaged. 0 when nothing or only a torn record was cut.
   */
  damagedEmbeddingBytes: number;
}

interface VectorLocation {
  offset: number;
  length: number;
}

export class ResponseCache {
  readonly dir: string;
  readonly loadReport: CacheLoadReport;
  readonly #replies = new Map<string, unknown>();
  readonly #vectors = new Map<string, VectorLocation>();
  #repliesFd: number;
  #embeddingsFd: number;
  #embeddingsSize: number;
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(dir: string, options: ResponseCacheOptions) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    const replies = this.#loadReplies();
    const embeddings = this.#loadEmbeddings();
    this.#repliesFd = replies.fd;
    this.#embeddingsFd = embeddings.fd;
    this.#embeddingsSize = embeddings.size;
    this.loadReport = {
      replies: this.#replies.size,
      embeddings: this.#vectors.size,
      truncatedBytes: { replies: replies.truncated, embeddings: embeddings.truncated },
      skippedLines: replies.skipped,
      skippedRecords: embeddings.skipped,
      damagedEmbeddingBytes: embeddings.damaged ? embeddings.truncated : 0,
    };
    const interval = options.fsyncIntervalMs ?? 1000;
    this.#timer = setInterval(() => this.flush(), interval);
    this.#timer.unref();
  }

  /** Opens (creating if needed) the cache in `dir`, repairing a torn tail. Synchronous. */
  static open(dir: string, options: ResponseCacheOptions = {}): ResponseCache {
    return new ResponseCache(dir, options);
  }

  get replyCount(): number {
    return this.#replies.size;
  }
  get embeddingCount(): number {
    return this.#vectors.size;
  }

  getReply(key: Buffer): unknown {
    return this.#replies.get(key.toString('hex'));
  }

  hasReply(key: Buffer): boolean {
    return this.#replies.has(key.toString('hex'));
  }

  putReply(key: Buffer, meta: ReplyMeta, response: unknown): void {
    this.#assertOpen();
    const hex = key.toString('hex');
    const line = `${JSON.stringify({
      key: hex,
      provider: meta.provider,
      model: meta.model,
      kind: meta.kind,
      created_at: new Date().toISOString(),
      response,
    })}\n`;
    writeAll(this.#repliesFd, Buffer.from(line, 'utf8'));
    this.#replies.set(hex, response);
    this.#dirty = true;
  }

  /** The stored vector, read from disk, or undefined. */
  getEmbedding(key: Buffer): Float32Array | undefined {
    const loc = this.#vectors.get(key.toString('hex'));
    if (!loc) return undefined;
    const buf = Buffer.alloc(loc.length * 4);
    const n = readSync(this.#embeddingsFd, buf, 0, buf.length, loc.offset);
    if (n !== buf.length) return undefined;
    const vector = decodeFloats(buf, loc.length);
    // A value no provider sends (NaN, ±Infinity) is damage in the file: asked again, as a
    // fresh reply with one would be (served, it failed every later build in the HNSW stage).
    for (const v of vector) if (!Number.isFinite(v)) return undefined;
    return vector;
  }

  hasEmbedding(key: Buffer): boolean {
    return this.#vectors.has(key.toString('hex'));
  }

  /** Appends several vectors with one write. */
  putEmbeddings(entries: ReadonlyArray<{ key: Buffer; vector: Float32Array }>): void {
    this.#assertOpen();
    if (entries.length === 0) return;
    let total = 0;
    for (const e of entries) total += HEADER_BYTES + e.vector.length * 4;
    const buf = Buffer.alloc(total);
    let pos = 0;
    const locations: Array<[string, VectorLocation]> = [];
    for (const e of entries) {
      if (e.key.length !== KEY_BYTES) throw new RangeError('cache keys are 32 bytes');
      e.key.copy(buf, pos);
      buf.writeUInt32LE(e.vector.length, pos + KEY_BYTES);
      pos += HEADER_BYTES;
      locations.push([
        e.key.toString('hex'),
        { offset: this.#embeddingsSize + pos, length: e.vector.length },
      ]);
      encodeFloats(e.vector, buf, pos);
      pos += e.vector.length * 4;
    }
    writeAll(this.#embeddingsFd, buf);
    this.#embeddingsSize += total;
    for (const [k, loc] of locations) this.#vectors.set(k, loc);
    this.#dirty = true;
  }

  /** fsyncs both files if anything was written since the last flush. */
  flush(): void {
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    fsyncSync(this.#repliesFd);
    fsyncSync(this.#embeddingsFd);
  }

  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    closeSync(this.#repliesFd);
    closeSync(this.#embeddingsFd);
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('response cache is closed');
  }

  #loadReplies(): { fd: number; truncated: number; skipped: number } {
    const path = join(this.dir, REPLIES_FILE);
    const fd = openSync(path, 'a+');
    const data = readFileSync(path);
    let start = 0;
    let skipped = 0;
    let goodEnd = 0;
    while (start < data.length) {
      const nl = data.indexOf(0x0a, start);
      if (nl < 0) break; // a last line without its newline: torn
      const bytes = data.subarray(start, nl);
      start = nl + 1;
      goodEnd = start;
      try {
        // Strict UTF-8: a damaged byte would otherwise come back as U+FFFD inside a reply.
        const line = STRICT_UTF8.decode(bytes);
        if (line.trim() === '') continue;
        const rec = JSON.parse(line) as { key?: unknown; response?: unknown };
        if (typeof rec.key === 'string' && /^[0-9a-f]{64}$/.test(rec.key) && 'response' in rec) {
          this.#replies.set(rec.key, rec.response);
        } else {
          skipped++;
        }
      } catch {
        skipped++;
      }
    }
    const truncated = data.length - goodEnd;
    if (truncated > 0) ftruncateSync(fd, goodEnd);
    return { fd, truncated, skipped };
  }

  #loadEmbeddings(): { fd: number; size: number; truncated: number; skipped: number; damaged: boolean } {
    const path = join(this.dir, EMBEDDINGS_FILE);
    const fd = openSync(path, 'a+');
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(HEADER_BYTES);
    /** The record length at `at` when its header is sane and the record ends within the file. */
    const recordEnd = (at: number): number | null => {
      if (at + HEADER_BYTES > size || readSync(fd, header, 0, HEADER_BYTES, at) !== HEADER_BYTES) return null;
      const length = header.readUInt32LE(KEY_BYTES);
      const end = at + HEADER_BYTES + length * 4;
      return length === 0 || length > MAX_VECTOR_LENGTH || end > size ? null : end;
    };
    /** Whether whole records chain from `at` to the end of the file (a torn last one allowed). */
    const chainsToEnd = (at: number, torn: number): boolean => {
      let q = at;
      let records = 0;
      for (let end = recordEnd(q); end !== null; end = recordEnd(q)) {
        q = end;
        records++;
      }
      return records > 0 && size - q < torn;
    };
    const lengths: number[] = [];
    let longest = 0;
    /** Byte ranges of damaged records skipped (dropped from the file below). */
    const dropped: [number, number][] = [];
    let pos = 0;
    let tornTail = true;
    while (pos + HEADER_BYTES <= size) {
      const end = recordEnd(pos);
      if (end === null) {
        // `header` holds this record's header (recordEnd read it).
        const declared = header.readUInt32LE(KEY_BYTES);
        // A torn tail: the record being written when a process died, running past the end
        // of the file, and shorter than any whole record (more bytes than that are damage).
        const runsPast =
          declared > 0 && declared <= MAX_VECTOR_LENGTH && pos + HEADER_BYTES + declared * 4 > size;
        if (runsPast && (longest === 0 || size - pos < HEADER_BYTES + longest * 4)) break;
        // Damage inside the file (a flipped byte in a length): that record is dropped when the
        // records after it chain to the end with a length seen before, so the vectors after
        // it are not thrown away and paid for again. (A flip to another length that still
        // fits the file is read as a record, and whatever follows it is cut below.)
        const resume = lengths
          .map((l) => pos + HEADER_BYTES + l * 4)
          .find((q) => q < size && chainsToEnd(q, HEADER_BYTES + longest * 4));
        if (resume === undefined) {
          tornTail = false;
          break;
        }
        dropped.push([pos, resume]);
        pos = resume;
        continue;
      }
      const length = (end - pos - HEADER_BYTES) / 4;
      if (!lengths.includes(length)) lengths.push(length);
      longest = Math.max(longest, length);
      this.#vectors.set(header.subarray(0, KEY_BYTES).toString('hex'), {
        offset: pos + HEADER_BYTES,
        length,
      });
      pos = end;
    }
    const truncated = size - pos;
    // Damage is kept beside the cache (EMBEDDINGS_FILE.damaged, the file as it was) before the
    // file is repaired: cut after its last whole record, damaged records taken out.
    const damaged = truncated > 0 && !tornTail;
    if (damaged || dropped.length > 0) copyFileSync(path, `${path}.damaged`);
    if (truncated > 0) ftruncateSync(fd, pos);
    if (dropped.length === 0) return { fd, size: pos, truncated, skipped: 0, damaged };
    // Rewritten without the skipped records, so the next open does not find (and report)
    // them again; then read again, now whole.
    dropRanges(fd, path, pos, dropped);
    closeSync(fd);
    this.#vectors.clear();
    const again = this.#loadEmbeddings();
    return { ...again, truncated, skipped: dropped.length, damaged };
  }
}

/** Rewrites the first `size` bytes of the file open as `fd` without the byte `ranges` (sorted), atomically. */
function dropRanges(fd: number, path: string, size: number, ranges: readonly [number, number][]): void {
  const temp = `${path}.repair`;
  const out = openSync(temp, 'w');
  try {
    const chunk = Buffer.alloc(1 << 20);
    let at = 0;
    for (const [from, to] of [...ranges, [size, size] as [number, number]]) {
      for (let p = at; p < from; ) {
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, from - p), p);
        if (n <= 0) throw new Error(`${path}: short read while repairing`);
        writeAll(out, chunk.subarray(0, n));
        p += n;
      }
      at = to;
    }
    fsyncSync(out);
  } finally {
    closeSync(out);
  }
  renameSync(temp, path);
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

function encodeFloats(v: Float32Array, buf: Buffer, pos: number): void {
  if (LITTLE_ENDIAN) {
    Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(buf, pos);
    return;
  }
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, pos + i * 4);
}

function decodeFloats(buf: Buffer, length: number): Float32Array {
  const out = new Float32Array(length);
  if (LITTLE_ENDIAN) {
    Buffer.from(out.buffer).set(buf.subarray(0, length * 4));
    return out;
  }
  for (let i = 0; i < length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
