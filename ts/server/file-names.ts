/**
 * The rules an uploaded file name must pass before anything is written under input/: shared
 * by the web UI's upload and the search server's POST /documents (./upload.ts).
 */

/** The longest file name Linux, macOS and Windows file systems all take: 255 bytes in UTF-8. */
export const MAX_NAME_BYTES = 255;

/**
 * Characters a file name may not hold: control characters (C0, DEL, C1), the invisible
 * bidirectional-text controls (an RLO inside `report<U+202E>fdp.txt` shows it as
 * `reporttxt.pdf`) and the line and paragraph separators.
 */
const FORBIDDEN_CHAR = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Checks one path segment under input/ (a file or folder name): not empty, not hidden nor
 * relative, at most 255 bytes in UTF-8, without folder separators, control or
 * bidirectional-text characters. Returns the problem or null; a refused name is quoted only
 * when it holds no invisible character.
 */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return 'the file has no name';
  const forbidden = FORBIDDEN_CHAR.exec(name);
  if (forbidden) {
    return `a file name contains ${codePoint(forbidden[0])}, a control or bidirectional-text character`;
  }
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    return `the file name is ${bytes} bytes in UTF-8; the limit is ${MAX_NAME_BYTES}`;
  }
  if (name.includes('/') || name.includes('\\')) return `"${name}" contains a folder separator`;
  if (name === '.' || name === '..' || name.startsWith('.')) return `"${name}" is a hidden or relative name`;
  // A build leaves these out (ts/indexing/discover.ts hiddenReason): accepted, the file
  // would be written and then never indexed nor listed.
  if (name.startsWith('~$'))
    return `"${name}" starts with ~$, the name of an Office lock file, which a build leaves out`;
  return null;
}

/**
 * Checks an uploaded file's name: `nameProblem`, and an extension `allowed` admits. Names are
 * refused rather than rewritten so the file on disk has the name the user sees.
 */
export function fileNameProblem(name: string, allowed: ReadonlySet<string>): string | null {
  return nameProblem(name) ?? fileTypeProblem(name, allowed);
}

/** An extension `allowed` does not admit (the upload's 415), or null. */
export function fileTypeProblem(name: string, allowed: ReadonlySet<string>): string | null {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot).toLowerCase();
  if (!allowed.has(ext)) {
    return `"${name}": only ${[...allowed].join(', ')} files can be indexed`;
  }
  return null;
}
