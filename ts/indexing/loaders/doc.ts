/**
 * Legacy Word .doc (docs/method.md §3.2) through word-extractor: body text, then footnotes.
 * word-extractor also reads a .docx mislabelled as .doc (it checks the magic bytes).
 */
import { oneLine } from './docx.js';
import { ExtractionFailure } from './failure.js';

interface WordDocument {
  // The JS accepts `filterUnicode`; the published types omit it. `false` keeps curly quotes
  // and dashes as written instead of folding them to ASCII.
  getBody(options?: { filterUnicode?: boolean }): string;
  getFootnotes(options?: { filterUnicode?: boolean }): string;
}
interface WordExtractorClass {
  new (): { extract(source: Buffer): Promise<WordDocument> };
}

let extractorModule: Promise<WordExtractorClass> | undefined;

function loadWordExtractor(): Promise<WordExtractorClass> {
  extractorModule ??= import('word-extractor').then(
    (m) => ((m as { default?: unknown }).default ?? m) as WordExtractorClass,
  );
  return extractorModule;
}

export async function extractDoc(bytes: Uint8Array): Promise<string> {
  const WordExtractor = await loadWordExtractor();
  let document: WordDocument;
  try {
    document = await new WordExtractor().extract(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
  } catch (error) {
    throw new ExtractionFailure(`not a readable .doc file (${oneLine(error)})`, { cause: error });
  }
  const body = document.getBody({ filterUnicode: false }).trim();
  const footnotes = document.getFootnotes({ filterUnicode: false }).trim();
  return footnotes === '' ? body : `${body}\n\n${footnotes}`;
}
