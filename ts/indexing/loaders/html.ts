/**
 * HTML to plain text (docs/method.md §3.2): the `<title>` text, then the body text. Script,
 * style, noscript and template content is dropped; block elements end a paragraph; `<br>`
 * and table rows end a line; cells of a row are joined by TAB; entities are decoded by
 * htmlparser2. Also used for .docx, whose mammoth output is HTML.
 */
import { Parser } from 'htmlparser2';
import { ExtractionFailure } from './failure.js';
import { decodeText } from './text.js';

const DROPPED = new Set(['script', 'style', 'noscript', 'template']);
/** Elements a head may hold; any other one starts the body (the HTML standard's "in head"). */
const HEAD_CONTENT = new Set([
  'head',
  'title',
  'meta',
  'link',
  'base',
  'style',
  'script',
  'noscript',
  'template',
]);

// biome-ignore format: a word list reads better packed
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'caption', 'center', 'dd', 'details', 'dialog', 'dir',
  'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5',
  'h6', 'header', 'hgroup', 'hr', 'legend', 'li', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'section',
  'summary', 'table', 'ul',
]);

type Break = 0 | 1 | 2 | 3; // none, space, line, paragraph

/**
 * Accumulates text with lazily emitted separators: a break is written only when more text
 * follows, so output never starts or ends with blank lines and runs of block boundaries
 * collapse into one paragraph break.
 */
class TextWriter {
  private readonly parts: string[] = [];
  private pending: Break = 0;
  private tabs = 0;
  private empty = true;
  private atLineStart = true;

  request(kind: Break): void {
    if (kind > this.pending) this.pending = kind;
    if (kind >= 2) this.tabs = 0;
  }

  tab(): void {
    this.tabs++;
  }

  /** Text whose whitespace has already been collapsed (or `pre` text, verbatim). */
  write(text: string): void {
    if (text === '') return;
    if (!this.empty) {
      if (this.pending === 3) this.parts.push('\n\n');
      else if (this.pending === 2) this.parts.push('\n');
    }
    if (this.tabs > 0) this.parts.push('\t'.repeat(this.tabs));
    else if (this.pending === 1 && !this.atLineStart) this.parts.push(' ');
    this.parts.push(text);
    this.pending = 0;
    this.tabs = 0;
    this.empty = false;
    this.atLineStart = text.endsWith('\n');
  }

  toString(): string {
    return this.parts.join('');
  }
}

const HTML_SPACE = /[ \t\n\f\r]+/g;

interface HtmlOptions {
  /** Skip an element and everything inside it (mammoth's footnote back-links, for one). */
  skip?: (name: string, attributes: Readonly<Record<string, string>>) => boolean;
}

/**
 * Open elements at most. The parser's cost per element grows with the depth (it keeps its
 * open elements in an array it shifts), so 200,000 nested divs took a minute of blocked event
 * loop; browsers stop nesting at a few hundred (Blink: 512).
 */
const MAX_HTML_DEPTH = 4096;

/** Plain text of an HTML string: title, blank line, body. */
export function htmlToText(html: string, options: HtmlOptions = {}): string {
  const body = new TextWriter();
  let title = '';
  let titleState: 'before' | 'inside' | 'done' = 'before';
  let dropDepth = 0; // inside script/style/… or a skipped element
  const dropStack: string[] = [];
  let headDepth = 0;
  let preDepth = 0;
  let cellDepth = 0;
  const cellIndex: number[] = []; // per open row

  let depth = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (++depth > MAX_HTML_DEPTH) {
          throw new ExtractionFailure(`HTML nested deeper than ${MAX_HTML_DEPTH} elements`);
        }
        if (dropDepth > 0) {
          if (name === dropStack[dropStack.length - 1]) dropDepth++;
          return;
        }
        if (DROPPED.has(name) || options.skip?.(name, attributes)) {
          dropStack.push(name);
          dropDepth = 1;
          return;
        }
        // The head ends at the first element that cannot be in it, as in a browser: a page
        // may leave out `</head>` and `<body>` (both optional), and its body is text too.
        if (headDepth > 0 && !HEAD_CONTENT.has(name)) headDepth = 0;
        if (name === 'head') headDepth++;
        else if (name === 'title' && titleState === 'before') titleState = 'inside';
        else if (name === 'br') body.request(2);
        else if (name === 'tr') {
          body.request(2);
          cellIndex.push(0);
        } else if (name === 'td' || name === 'th') {
          const row = cellIndex.length - 1;
          if (row >= 0) {
            if (cellIndex[row]! > 0) body.tab();
            cellIndex[row]!++;
          }
          cellDepth++;
        } else if (BLOCKS.has(name)) {
          // Inside a cell a paragraph would break the row's line: use a space instead.
          body.request(cellDepth > 0 && name !== 'table' ? 1 : 3);
          if (name === 'pre') preDepth++;
        }
      },
      onclosetag(name) {
        depth--;
        if (dropDepth > 0) {
          if (name === dropStack[dropStack.length - 1]) {
            dropDepth--;
            if (dropDepth === 0) dropStack.pop();
          }
          return;
        }
        if (name === 'head') headDepth = Math.max(0, headDepth - 1);
        else if (name === 'title' && titleState === 'inside') titleState = 'done';
        else if (name === 'tr') {
          body.request(2);
          cellIndex.pop();
        } else if (name === 'td' || name === 'th') {
          cellDepth = Math.max(0, cellDepth - 1);
        } else if (BLOCKS.has(name)) {
          body.request(cellDepth > 0 && name !== 'table' ? 1 : 3);
          if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
        }
      },
      ontext(text) {
        if (dropDepth > 0) return;
        if (titleState === 'inside') {
          title += text;
          return;
        }
        // Text other than white space ends the head too (an implied <body>).
        if (headDepth > 0) {
          if (text.replace(HTML_SPACE, '') === '') return;
          headDepth = 0;
        }
        if (preDepth > 0) {
          body.write(text);
          return;
        }
        const collapsed = text.replace(HTML_SPACE, ' ');
        if (collapsed === ' ' || collapsed === '') {
          body.request(1);
          return;
        }
        if (collapsed.startsWith(' ')) body.request(1);
        body.write(collapsed.trim());
        if (collapsed.endsWith(' ')) body.request(1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();

  const titleText = title.replace(HTML_SPACE, ' ').trim();
  const bodyText = body.toString();
  if (titleText === '') return bodyText;
  if (bodyText === '') return titleText;
  return `${titleText}\n\n${bodyText}`;
}

/** The label of a `<meta charset>` (or http-equiv content type) in the first 1024 bytes. */
export function sniffHtmlCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const match = /<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head);
  return match ? match[1]!.toLowerCase() : null;
}

// biome-ignore format: the table reads better packed
/** windows-1252 bytes 0x80–0x9F (the WHATWG index; the five it leaves unassigned map to C1). */
const WINDOWS_1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/**
 * windows-1252, which the labels iso-8859-1, latin1 and ascii mean on the web too. Decoded
 * here: the TextDecoder of Node 20.20 (and other recent releases) turns 0x80–0x9F into C1
 * controls, which lost the € ’ “ ” – — … ™ of legacy pages.
 */
function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (c) => String.fromCharCode(WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!));
}

/**
 * Decode an HTML file: a BOM wins, then a declared `<meta charset>` (legacy pages in e.g.
 * GBK or windows-1252 are common; a declared UTF-16 is read as UTF-8, as browsers do), then
 * strict UTF-8.
 */
function decodeHtml(bytes: Uint8Array): string {
  const hasBom =
    (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) ||
    (bytes[0] === 0xff && bytes[1] === 0xfe) ||
    (bytes[0] === 0xfe && bytes[1] === 0xff);
  const declared = hasBom ? null : sniffHtmlCharset(bytes);
  if (declared && declared !== 'utf-8' && declared !== 'utf8') {
    let decoder: InstanceType<typeof TextDecoder> | null = null;
    try {
      decoder = new TextDecoder(declared);
    } catch {
      decoder = null; // unknown label: fall through to UTF-8
    }
    // A page without a BOM cannot be UTF-16 (its ASCII markup would not be): the HTML
    // standard reads a declared utf-16 as UTF-8, and so do we.
    if (decoder?.encoding === 'windows-1252') return decodeWindows1252(bytes);
    if (decoder && decoder.encoding !== 'utf-8' && !decoder.encoding.startsWith('utf-16')) {
      try {
        return decoder.decode(bytes);
      } catch (error) {
        throw new ExtractionFailure(`not valid ${declared}`, { cause: error });
      }
    }
  }
  return decodeText(bytes);
}

export function extractHtml(bytes: Uint8Array): string {
  return htmlToText(decodeHtml(bytes));
}
