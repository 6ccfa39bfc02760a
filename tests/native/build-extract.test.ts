import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cleanDocumentText,
  documentFormat,
  extractFile,
  extractFiles,
  extractFromBytes,
  hasContent,
} from '../../ts/indexing/extract.js';
import { extractHtml, htmlToText, sniffHtmlCharset } from '../../ts/indexing/loaders/html.js';
import { joinHyphenatedLines, pageText } from '../../ts/indexing/loaders/pdf.js';
import { decodeText } from '../../ts/indexing/loaders/text.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'documents');

async function textOf(name: string): Promise<string> {
  const result = await extractFile({ path: name, absPath: join(FIXTURES, name) });
  if (!result.ok) throw new Error(`expected ${name} to extract, got: ${result.error.message}`);
  return result.document.text;
}

async function reasonOf(name: string): Promise<string> {
  const result = await extractFile({ path: name, absPath: join(FIXTURES, name) });
  if (result.ok)
    throw new Error(`expected ${name} to fail, got text ${JSON.stringify(result.document.text)}`);
  expect(result.error.path).toBe(name);
  expect(result.error.message.startsWith(`${name}: `)).toBe(true);
  return result.error.reason;
}

describe('text files', () => {
  it('reads UTF-8, strips a UTF-8 BOM, accepts UTF-16 with BOM', async () => {
    expect(await textOf('plain.txt')).toBe('Plain text line one.\nLine two with ünïcödé.\n');
    expect(await textOf('bom-utf8.txt')).toBe('BOM then text.\n');
    expect(await textOf('utf16le.txt')).toBe('UTF-16 little endian: 居里夫人.\n');
    expect(await textOf('utf16be.txt')).toBe('UTF-16 big endian: 居里夫人.\n');
    expect(await textOf('chinese.txt')).toBe('居里夫人出生于华沙。她两次获得诺贝尔奖！\n');
  });

  it('keeps Markdown verbatim but normalises line ends and drops control characters', async () => {
    expect(await textOf('crlf.md')).toBe('# Title\n\nLine with a bell and a form feed.\nOld Mac line.\n');
  });

  it('rejects invalid UTF-8, binary and empty files by name', async () => {
    expect(await reasonOf('latin1.txt')).toBe('not valid UTF-8');
    expect(await reasonOf('binary.txt')).toBe('not valid UTF-8');
    expect(await reasonOf('empty.txt')).toMatch(/empty/);
    expect(await reasonOf('blank.md')).toMatch(/empty/);
  });

  it('refuses a .txt or .md that decodes but holds NUL bytes as binary, naming the file', async () => {
    const bytes = new TextEncoder().encode('ELF header\u0000\u0000\u0000then some readable words');
    for (const path of ['dump.txt', 'notes/x.md']) {
      const r = await extractFromBytes(path, bytes);
      expect(r.ok).toBe(false);
      if (r.ok) throw new Error('unreachable');
      expect(r.error.path).toBe(path);
      expect(r.error.reason).toBe('binary file (contains NUL bytes), not text');
      expect(r.error.message).toContain(path);
    }
    // UTF-16 text has zero bytes but no NUL character: still text.
    const utf16 = Uint8Array.of(0xff, 0xfe, 0x41, 0x00, 0x42, 0x00);
    expect((await extractFromBytes('u.txt', utf16)).ok).toBe(true);
  });

  it('rejects malformed UTF-16', () => {
    expect(() => decodeText(Uint8Array.of(0xff, 0xfe, 0x41))).toThrow(
      'not valid UTF-16 (odd number of bytes)',
    );
    // A lone high surrogate.
    expect(() => decodeText(Uint8Array.of(0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00))).toThrow('not valid UTF-16');
  });
});

describe('HTML', () => {
  it('extracts title then body with paragraph, line and cell rules', async () => {
    expect(await textOf('page.html')).toBe(
      [
        'Fixture & Page',
        '',
        'Main heading',
        '',
        'First paragraph with an entity: café <tag> €5.',
        '',
        'Second paragraph, wrapped over lines.',
        'After a break.',
        '',
        'Div inline span text.',
        '',
        'Name\tBorn',
        'Marie Curie\t1867',
        'Pierre Curie\t1859',
        '',
        'Item one',
        '',
        'Item two',
        '',
        'pre  keeps',
        '  spacing',
      ].join('\n'),
    );
  });

  it('honours a declared legacy charset', async () => {
    expect(await textOf('gbk.htm')).toBe('中文\n\n居里夫人');
    expect(
      sniffHtmlCharset(
        new TextEncoder().encode('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'),
      ),
    ).toBe('shift_jis');
  });

  it('reads windows-1252 (and the labels that mean it) with its 0x80–0x9F punctuation', () => {
    for (const label of ['windows-1252', 'iso-8859-1', 'latin1', 'us-ascii']) {
      const page = Buffer.concat([
        Buffer.from(`<html><head><meta charset="${label}"><title>Caf`),
        Buffer.from([0xe9]),
        Buffer.from('</title></head><body><p>It doesn'),
        Buffer.from([0x92]),
        Buffer.from('t open: '),
        Buffer.from([0x80]),
        Buffer.from(' 3 '),
        Buffer.from([0x96, 0x20, 0x93]),
        Buffer.from('Daily Post'),
        Buffer.from([0x94, 0x85, 0x99, 0x81]),
        Buffer.from('</p></body></html>'),
      ]);
      expect(extractHtml(page), label).toBe(
        'Café\n\nIt doesn\u2019t open: \u20ac 3 \u2013 \u201cDaily Post\u201d\u2026\u2122\u0081',
      );
    }
  });

  it('ends the head where the body starts when </head> and <body> are left out', () => {
    const page =
      '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Harbour notes</title>\n\n<h1>The Old Harbour</h1>\n<p>Dredged in 1903 by Ruth Calder.</p>\n</html>\n';
    expect(htmlToText(page)).toBe('Harbour notes\n\nThe Old Harbour\n\nDredged in 1903 by Ruth Calder.');
    expect(htmlToText('<head><title>T</title>Loose text<p>Para</p>')).toBe('T\n\nLoose text\n\nPara');
    // Head content stays out of the text, and a head closed as usual changes nothing.
    expect(
      htmlToText('<head><title>T</title><style>p{}</style><link rel="x"><base href="/"></head><p>b</p>'),
    ).toBe('T\n\nb');
  });

  it('refuses HTML nested thousands of elements deep at once; unclosed paragraphs are not nesting', () => {
    const deep = `<html><body>${'<div>'.repeat(200_000)}x${'</div>'.repeat(200_000)}</body></html>`;
    const started = performance.now();
    expect(() => extractHtml(new TextEncoder().encode(deep))).toThrow(
      'HTML nested deeper than 4096 elements',
    );
    expect(performance.now() - started).toBeLessThan(5000);
    const sloppy = `<p>a${'<p>b'.repeat(5000)}<ul>${'<li>x<br>'.repeat(5000)}</ul>`;
    expect(htmlToText(sloppy).startsWith('a\n\nb\n\nb')).toBe(true);
  });

  it('reads a page that declares utf-16 without a BOM as UTF-8, as browsers do', () => {
    const page =
      '<html><head><meta charset="utf-16"><title>Halden</title></head><body><p>Edith Pryce</p></body></html>';
    expect(extractHtml(new TextEncoder().encode(page))).toBe('Halden\n\nEdith Pryce');
  });

  it('keeps empty leading cells as TABs and handles fragments without <body>', () => {
    expect(htmlToText('<table><tr><td></td><td>b</td><td>c</td></tr><tr><td>d</td></tr></table>')).toBe(
      '\tb\tc\nd',
    );
    expect(htmlToText('just <i>text</i> &amp; more')).toBe('just text & more');
    expect(htmlToText('<p>a</p><p></p><div><p>b</p></div>')).toBe('a\n\nb');
    // Script is raw text (its first </script> ends it); templates nest.
    expect(htmlToText('<div>a<script>x<script>y</script>z</div>')).toBe('az');
    expect(htmlToText('<div>a<template><template>x</template>y</template>b</div>')).toBe('ab');
    expect(htmlToText('<html><head><title>T</title></head><body></body></html>')).toBe('T');
    expect(htmlToText('line<br>next<br><br>after')).toBe('line\nnext\nafter');
  });
});

describe('Word', () => {
  it('.docx: headings and paragraphs, TAB-joined table rows, footnotes; no header, footer or comment', async () => {
    const text = await textOf('sample.docx');
    expect(text).toBe(
      [
        'Docx Heading',
        '',
        'First docx paragraph with a note[1].',
        '',
        'Commented words stay.',
        '',
        'Name\tBorn',
        'Marie Curie\t1867',
        '',
        'Last paragraph: 居里夫人。',
        '',
        'The footnote text.',
      ].join('\n'),
    );
    expect(text).not.toMatch(/HEADER|FOOTER|COMMENT|↑/);
  });

  it('.doc: body then footnotes, curly quotes kept', async () => {
    expect(await textOf('sample.doc')).toBe(
      'Legacy Word body paragraph one.\nSecond paragraph with a note and “quotes”.\n\nThe doc footnote.',
    );
  });

  it('corrupt Word files fail by name', async () => {
    expect(await reasonOf('corrupt.docx')).toMatch(/^not a readable \.docx file/);
    expect(await reasonOf('corrupt.doc')).toMatch(/^not a readable \.doc file/);
  });
});

describe('PDF', () => {
  it('joins hyphenated line ends and separates pages by a blank line', async () => {
    expect(await textOf('sample.pdf')).toBe(
      'The first page has a hyphenated word and a\nwell-\nKnown name.\n\nA new paragraph after a gap.\n\nSecond page text.',
    );
  });

  it('refuses encrypted files, even with an empty user password', async () => {
    expect(await reasonOf('encrypted.pdf')).toBe('encrypted PDF');
  });

  it('reports corrupt and text-less PDFs', async () => {
    expect(await reasonOf('corrupt.pdf')).toMatch(/^not a readable PDF/);
    expect(await reasonOf('no-text.pdf')).toMatch(/empty/);
  });

  it('rebuilds lines from baselines when items carry no end-of-line flag', () => {
    const item = (str: string, y: number, hasEOL = false) => ({
      str,
      y,
      hasEOL,
      transform: [10, 0, 0, 10, 0, y],
      height: 10,
    });
    expect(pageText([item('One ', 700), item('line', 700), item('Next', 688), item('Far', 600)])).toBe(
      'One line\nNext\n\nFar',
    );
    expect(joinHyphenatedLines('co-\noperate\nX-\nRay\nsoft\u00ad\nhyphen')).toBe(
      'cooperate\nX-\nRay\nsofthyphen',
    );
  });
});

describe('clean-up and bookkeeping', () => {
  it('cleanDocumentText: CRLF/CR to LF, control characters other than TAB and LF removed', () => {
    expect(cleanDocumentText('a\r\nb\rc\n\td\u0000e\u0007f\u007fg\u0085h\u200bi\ufeffj')).toBe(
      'a\nb\nc\n\tdefgh\u200bi\ufeffj',
    );
  });

  it('hasContent treats U+FEFF as text but whitespace as empty', () => {
    expect(hasContent(' \n\t\u00a0\u3000')).toBe(false);
    expect(hasContent('\ufeff')).toBe(true);
  });

  it('documentFormat maps extensions, case-insensitively', () => {
    expect(documentFormat('a/B.HTM')).toBe('html');
    expect(documentFormat('x.Docx')).toBe('docx');
    expect(documentFormat('x.rtf')).toBeNull();
  });

  it('returns the hash of the extracted bytes', async () => {
    const r = await extractFromBytes('a.txt', new TextEncoder().encode('abc'));
    expect(r.ok && r.document.hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('one bad document does not stop the others; results keep input order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noderag-extract-'));
    try {
      await writeFile(join(dir, 'a.txt'), 'alpha');
      await writeFile(join(dir, 'b.pdf'), 'not a pdf');
      await symlink(join(dir, 'missing'), join(dir, 'c.txt'));
      await writeFile(join(dir, 'd.md'), 'delta');
      const files = ['a.txt', 'b.pdf', 'c.txt', 'd.md'].map((path) => ({ path, absPath: join(dir, path) }));
      const seen: number[] = [];
      const results = await extractFiles(files, { concurrency: 3, onResult: (_, done) => seen.push(done) });
      expect(results.map((r) => (r.ok ? r.document.text : `ERR ${r.error.message}`))).toEqual([
        'alpha',
        expect.stringMatching(/^ERR b\.pdf: not a readable PDF/),
        // Documents are read without following a link (discovery hands over resolved targets).
        'ERR c.txt: cannot read (ELOOP: replaced by a symbolic link since discovery)',
        'delta',
      ]);
      expect(seen).toEqual([1, 2, 3, 4]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads small files and one past the synchronous-read limit alike; a FIFO swapped in is an error, not a wait', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noderag-extract-'));
    try {
      const big = `${'word '.repeat((1 << 20) / 5)}end`; // just over 1 MiB: read asynchronously
      await writeFile(join(dir, 'small.txt'), 'small text');
      await writeFile(join(dir, 'big.txt'), big);
      const fifo = spawnSync('mkfifo', [join(dir, 'pipe.txt')]).status === 0;
      const names = ['small.txt', 'big.txt', ...(fifo ? ['pipe.txt'] : [])];
      const results = await extractFiles(names.map((path) => ({ path, absPath: join(dir, path) })));
      expect(results.map((r) => (r.ok ? r.document.text.length : `ERR ${r.error.message}`))).toEqual([
        'small text'.length,
        big.trimEnd().length,
        ...(fifo ? ['ERR pipe.txt: cannot read (ENOTREG)'] : []),
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
