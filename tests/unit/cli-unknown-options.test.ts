import { describe, expect, it } from 'vitest';
import { repeatedOption, unknownOption } from '../../ts/cli/unknown-options.js';

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

describe('repeatedOption', () => {
  it('finds an option with a value given twice, in any spelling', () => {
    expect(repeatedOption(['-f', 'a', '-f', 'b'], ARGS)).toEqual({ first: '-f', second: '-f' });
    expect(repeatedOption(['--folder=a', '--rebuild', '-f', 'b'], ARGS)).toEqual({
      first: '--folder',
      second: '-f',
    });
    expect(repeatedOption(['--cache-size', '1', '--cacheSize', '2'], ARGS)).toEqual({
      first: '--cache-size',
      second: '--cacheSize',
    });
    expect(repeatedOption(['-q', 'x', '-rqy'], ARGS)).toEqual({ first: '-q', second: '-q' });
  });

  it('leaves alone flags without a value, values that look like options, and eval’s --set', () => {
    expect(repeatedOption(['-r', '-r', '--rebuild', '--no-rebuild', '-f', 'x'], ARGS)).toBeNull();
    expect(repeatedOption(['-q', '-f', '-f', 'dir'], ARGS)).toBeNull();
    expect(repeatedOption(['-f', 'a', '--', '-f', 'b'], ARGS)).toBeNull();
    expect(repeatedOption(['--set', 'a=1', '--set', 'b=2'], { set: { type: 'string' } })).toBeNull();
  });
});
