/**
 * Document extraction (docs/method.md §3.2): pick the loader by extension, normalise line ends
 * and control characters, reject empty results. A document that fails yields a
 * `DocumentError` naming it; it never stops the other documents.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { cleanText } from '../text/index.js';
import { eventLoopYielder, READ_NO_FOLLOW, readSmallFileSync, sha256Bytes } from './discover.js';
import { DocumentError } from './errors.js';
import { extractDoc } from './loaders/doc.js';
import { extractDocx, oneLine } from './loaders/docx.js';
import { ExtractionFailure } from './loaders/failure.js';
import { extractHtml } from './loaders/html.js';
import { extractPdf } from './loaders/pdf.js';
import { extractPlainText } from './loaders/text.js';

export const DOCUMENT_FORMATS = ['txt', 'md', 'html', 'docx', 'doc', 'pdf'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** The format of a path by its extension (`.htm` is `html`), or null when unsupported. */
export function documentFormat(path: string): DocumentFormat | null {
  const ext = extname(path).toLowerCase().slice(1);
  if (ext === 'htm') return 'html';
  return (DOCUMENT_FORMATS as readonly string[]).includes(ext) ? (ext as DocumentFormat) : null;
}

/** Raw text of one document's bytes, before clean-up. Throws `ExtractionFailure`. */
export async function extractRawText(bytes: Uint8Array, format: DocumentFormat): Promise<string> {
  switch (format) {
    case 'txt':
    case 'md':
      return extractPlainText(bytes);
    case 'html':
      return extractHtml(bytes);
    case 'docx':
      return extractDocx(bytes);
    case 'doc':
      return extractDoc(bytes);
    case 'pdf':
      return extractPdf(bytes);
  }
}

/**
 * CRLF and CR become LF; control characters other than TAB and LF are removed (docs/method.md
 * §3.2). The Rust core's clean-up (ts/text `cleanText`), re-exported under the name the
 * document stage uses; there is no TS copy to drift from it.
 */
export { cleanText as cleanDocumentText };

/** True when the text has a character that is not Unicode White_Space (U+FEFF counts as text, §0). */
export function hasContent(text: string): boolean {
  return /[^\p{White_Space}]/u.test(text);
}

export interface ExtractedDocument {
  /** Path relative to input/, `/` separated. */
  path: string;
  format: DocumentFormat;
  /** SHA-256 of the bytes the text came from (may differ from INIT's if the file changed since). */
  hash: string;
  text: string;
}

/**
 * A failure carries `hash` when it follows from the bytes (the content is not a readable
 * document, or holds no text), so the same content would fail again; a file that could not
 * be read has none.
 */
export type ExtractionResult =
  | { ok: true; document: ExtractedDocument }
  | { ok: false; error: DocumentError; hash?: string };

/** Extract and clean one document from its bytes. Never throws for a bad document. */
export async function extractFromBytes(path: string, bytes: Uint8Array): Promise<ExtractionResult> {
  const format = documentFormat(path);
  if (format === null) return { ok: false, error: new DocumentError(path, 'unsupported file type') };
  const hash = sha256Bytes(bytes);
  let text: string;
  try {
    text = cleanText(await extractRawText(bytes, format));
  } catch (error) {
    const reason =
      error instanceof ExtractionFailure ? error.message : `cannot parse .${format} (${oneLine(error)})`;
    return { ok: false, error: new DocumentError(path, reason, { cause: error }), hash };
  }
  if (!hasContent(text))
    return { ok: false, error: new DocumentError(path, 'no text (empty document)'), hash };
  return { ok: true, document: { path, format, hash, text } };
}

/** Read and extract one file. */
export async function extractFile(file: { path: string; absPath: string }): Promise<ExtractionResult> {
  let bytes: Buffer;
  try {
    bytes = readSmallFileSync(file.absPath) ?? (await readFile(file.absPath, { flag: READ_NO_FOLLOW }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? oneLine(error);
    const why = code === 'ELOOP' ? 'ELOOP: replaced by a symbolic link since discovery' : code;
    return { ok: false, error: new DocumentError(file.path, `cannot read (${why})`, { cause: error }) };
  }
  return extractFromBytes(file.path, bytes);
}

/**
 * Extract many files, a few at a time (parsing is CPU-bound on this thread; the overlap
 * only hides file reads). Results come back in input order, whatever finishes first.
 */
export async function extractFiles(
  files: readonly { path: string; absPath: string }[],
  options: { concurrency?: number; onResult?: (result: ExtractionResult, done: number) => void } = {},
): Promise<ExtractionResult[]> {
  const results: ExtractionResult[] = new Array(files.length);
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 2, files.length));
  let next = 0;
  let done = 0;
  const yieldNow = eventLoopYielder();
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      const result = await extractFile(files[i]!);
      results[i] = result;
      done++;
      options.onResult?.(result, done);
      // Small files are read synchronously (readSmallFileSync): let the event loop run now
      // and then.
      await yieldNow();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}
