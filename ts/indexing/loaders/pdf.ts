/**
 * PDF (docs/method.md §3.2) through pdfjs-dist (legacy build, which runs in Node without a
 * worker thread): the text layer page by page in content order, lines rebuilt from the
 * items' end-of-line flags and baselines, hyphenated line ends joined, pages separated by
 * a blank line. No OCR. Encrypted files are refused, even those that open with an empty
 * password: their text is not meant to be extracted.
 */
import { oneLine } from './docx.js';
import { ExtractionFailure } from './failure.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjsModule: Promise<PdfJs> | undefined;

function loadPdfJs(): Promise<PdfJs> {
  pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjsModule;
}

interface PositionedText {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/** Join the text items of one page into lines and paragraphs. */
export function pageText(items: readonly PositionedText[]): string {
  let out = '';
  let lastY: number | null = null;
  let lastHeight = 0;
  for (const item of items) {
    if (item.str !== '') {
      const y = item.transform[5] ?? 0;
      if (lastY !== null) {
        const dy = Math.abs(y - lastY);
        const lineHeight = Math.max(lastHeight, item.height, 1);
        // A new baseline without an end-of-line flag is still a new line; a gap of more
        // than about one empty line between baselines starts a paragraph.
        if (dy > lineHeight * 0.5 && !out.endsWith('\n')) out += '\n';
        if (dy > lineHeight * 1.8 && !out.endsWith('\n\n')) out += '\n';
      }
      out += item.str;
      lastY = y;
      lastHeight = item.height;
    }
    if (item.hasEOL && out !== '' && !out.endsWith('\n')) out += '\n';
  }
  return joinHyphenatedLines(out.replace(/[ \t]+\n/g, '\n').trim());
}

/** "infor-\nmation" → "information": a letter, a hyphen at the line end, a lower-case letter next. */
export function joinHyphenatedLines(text: string): string {
  return text.replace(/(\p{L})[-\u00ad]\n[ \t]*(?=\p{Ll})/gu, '$1').replace(/\u00ad\n/g, '');
}

/**
 * pdfjs runs its "worker" in this thread, and on some damaged files (a bad cross-reference
 * entry) that worker rejects a promise of its own that nothing awaits, after the document's
 * promise has already failed: Node's default for an unhandled rejection ends the process, so
 * one bad PDF stopped every build. While PDFs are read, and for a while after, a listener
 * takes such rejections (pdfjs's own exception classes) and leaves any other as Node would:
 * to the application's own listeners if it has some, else as its --unhandled-rejections
 * mode says (thrown by default).
 */
const PDFJS_EXCEPTIONS = new Set([
  'XRefEntryException',
  'XRefParseException',
  'FormatError',
  'InvalidPDFException',
  'MissingPDFException',
  'UnknownErrorException',
  'UnexpectedResponseException',
  'PasswordException',
  'AbortException',
]);
const LINGER_MS = 10_000;
let reading = 0;
let lingering: NodeJS.Timeout | undefined;

/** By name only: a bundled application has no `pdfjs-dist` path in its stacks. */
function isPdfJsRejection(reason: unknown): boolean {
  const e = reason as { name?: unknown } | null;
  return typeof e === 'object' && e !== null && typeof e.name === 'string' && PDFJS_EXCEPTIONS.has(e.name);
}

/** The process's `--unhandled-rejections` mode (Node's default is `throw`). */
function rejectionMode(): string {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  let mode = 'throw';
  for (const f of flags) {
    const m = /^--unhandled-rejections=(\S+)$/.exec(f);
    if (m) mode = m[1]!;
  }
  return mode;
}

/** Any other rejection is left as Node leaves it when no listener is set, in the process's mode. */
function onRejection(reason: unknown): void {
  if (isPdfJsRejection(reason)) return;
  if (process.listenerCount('unhandledRejection') > 1) return; // the application handles it
  const mode = rejectionMode();
  if (mode === 'none') return;
  if (mode === 'warn' || mode === 'warn-with-error-code') {
    process.emitWarning(
      `Unhandled promise rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
    );
    if (mode === 'warn-with-error-code') process.exitCode = 1;
    return;
  }
  throw reason instanceof Error
    ? reason
    : Object.assign(new Error(`Unhandled promise rejection: ${String(reason)}`), {
        code: 'ERR_UNHANDLED_REJECTION',
      });
}

function guardBegin(): void {
  if (lingering) clearTimeout(lingering);
  lingering = undefined;
  if (reading++ === 0 && !process.listeners('unhandledRejection').includes(onRejection)) {
    process.on('unhandledRejection', onRejection);
  }
}

function guardEnd(): void {
  if (--reading > 0) return;
  lingering = setTimeout(() => {
    lingering = undefined;
    if (reading === 0) process.off('unhandledRejection', onRejection);
  }, LINGER_MS);
  lingering.unref();
}

export async function extractPdf(bytes: Uint8Array): Promise<string> {
  guardBegin();
  try {
    return await readPdf(bytes);
  } finally {
    guardEnd();
  }
}

async function readPdf(bytes: Uint8Array): Promise<string> {
  const pdfjs = await loadPdfJs();
  const task = pdfjs.getDocument({
    // pdfjs may detach the buffer it is given; hand it a copy.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  let document: Awaited<typeof task.promise>;
  try {
    document = await task.promise;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException') throw new ExtractionFailure('encrypted PDF (password required)');
    throw new ExtractionFailure(`not a readable PDF (${oneLine(error)})`, { cause: error });
  }
  try {
    const metadata = await document.getMetadata();
    const info = metadata.info as { EncryptFilterName?: string | null };
    if (info.EncryptFilterName) throw new ExtractionFailure('encrypted PDF');
    const pages: string[] = [];
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      const items: PositionedText[] = [];
      for (const item of content.items) {
        if ('str' in item) {
          items.push({ str: item.str, hasEOL: item.hasEOL, transform: item.transform, height: item.height });
        }
      }
      const text = pageText(items);
      if (text !== '') pages.push(text);
      page.cleanup();
    }
    return pages.join('\n\n');
  } catch (error) {
    if (error instanceof ExtractionFailure) throw error;
    throw new ExtractionFailure(`not a readable PDF (${oneLine(error)})`, { cause: error });
  } finally {
    await document.destroy();
  }
}
