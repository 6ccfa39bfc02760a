import { describe, expect, it } from 'vitest';
import { unknownOption } from '../../ts/cli/unknown-options.js';

const ARGS = {
  folder: { type: 'string', alias: 'f' },
  rebuild: { type: 'boolean' },
  'cache-size': { type: 'string' },
  reload: { type: 'boolean', default: true },
  retrieval: { type: 'boolean', alias: 'r' },
  answer: { type: 'boolean', alias: 'a' },
  question: { type: 'string', alias: 'q' },
} as const;

describe('unknownOption', () => {
  it('accepts every spelling of the defined options, and their values', () => {
    for (const argv of [
      ['-f', 'dir', '--rebuild'],
      ['--folder=dir', '--no-reload', '--cache-size', '-1'],
      ['--cacheSize', '5', '-ra', '-q', '--what is this?'],
      ['-qwho', '-f', 'x'],
      ['-f', 'x', '--', '--anything-after-the-separator'],
    ]) {
      expect(unknownOption(argv, ARGS), argv.join(' ')).toBeNull();
    }
  });

  it('names the first unknown option, with the nearest known one when it is close', () => {
    expect(unknownOption(['-f', 'x', '--rebiuld'], ARGS)).toEqual({
      option: '--rebiuld',
      suggestion: '--rebuild',
    });
    expect(unknownOption(['--cache-sizes=3'], ARGS)).toEqual({
      option: '--cache-sizes',
      suggestion: '--cache-size',
    });
    expect(unknownOption(['--verbose'], ARGS)).toEqual({ option: '--verbose', suggestion: null });
    expect(unknownOption(['-rx'], ARGS)).toEqual({ option: '-x', suggestion: null });
    // The value of an option that takes one is not an option, even when it starts with "-".
    expect(unknownOption(['-q', '-zzz'], ARGS)).toBeNull();
  });
});
