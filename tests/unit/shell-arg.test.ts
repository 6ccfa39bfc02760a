import { describe, expect, it } from 'vitest';
import { shellArg } from '../../ts/shell-arg.js';

describe('shellArg (commands suggested in messages)', () => {
  it('leaves plain paths as they are and quotes the others so a shell reads them back', () => {
    expect(shellArg('/tmp/proj-1/a_b.c')).toBe('/tmp/proj-1/a_b.c');
    expect(shellArg('/Users/me/My Docs')).toBe(`'/Users/me/My Docs'`);
    expect(shellArg("it's")).toBe(`'it'\\''s'`);
    expect(shellArg('$HOME;rm')).toBe(`'$HOME;rm'`);
    expect(shellArg('ünï')).toBe(`'ünï'`);
  });
});
