/**
 * .docx (docs/method.md §3.2) through mammoth: mammoth turns the document into HTML (paragraphs,
 * headings, tables, footnotes and endnotes appended; headers, footers and comments left
 * out), and the HTML extractor turns that into text with the same paragraph, row and cell
 * rules as .html files.
 */
import { ExtractionFailure } from './failure.js';
import { htmlToText } from './html.js';

type Mammoth = typeof import('mammoth');
let mammothModule: Promise<Mammoth> | undefined;

function loadMammoth(): Promise<Mammoth> {
  mammothModule ??= import('mammoth').then((m) => ((m as { default?: Mammoth }).default ?? m) as Mammoth);
  return mammothModule;
}

/** mammoth's back-links from a footnote to its reference ("↑") are navigation, not text. */
function isNoteBackLink(name: string, attributes: Readonly<Record<string, string>>): boolean {
  const href = attributes.href ?? '';
  return name === 'a' && (href.startsWith('#footnote-ref-') || href.startsWith('#endnote-ref-'));
}

export async function extractDocx(bytes: Uint8Array): Promise<string> {
  const mammoth = await loadMammoth();
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        // Images carry no text; skip base64-encoding them.
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
        // Never follow links to files outside the document.
        externalFileAccess: false,
      },
    );
    html = result.value;
  } catch (error) {
    throw new ExtractionFailure(`not a readable .docx file (${oneLine(error)})`, { cause: error });
  }
  return htmlToText(html, { skip: isNoteBackLink });
}

export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
