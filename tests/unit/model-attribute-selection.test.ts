import { describe, expect, it } from 'vitest';
import { type AttributeCase, attributeAction } from '../../ts/model/attribute-selection.js';

const base: AttributeCase = {
  hasAttribute: false,
  recordedInput: undefined,
  retiredInput: undefined,
  unimportantInput: undefined,
  incremental: true,
  touched: true,
  // The rules below the neighbourhood one: something around the entity changed.
  neighbourhoodTouched: true,
  sameModel: true,
};

/** The action, and whether the input had to be computed. */
function decide(c: Partial<AttributeCase>, input = 'h-now'): [string, boolean] {
  let computed = false;
  const action = attributeAction({ ...base, ...c }, () => {
    computed = true;
    return input;
  });
  return [action, computed];
}

describe('which important entities get an attribute call (docs/method.md §3.5, §4.5)', () => {
  it('a first build asks for every important entity without an attribute', () => {
    expect(decide({ incremental: false, touched: true })).toEqual(['ask', true]);
    // A first build judges everything: a stale record does not hold it back.
    expect(decide({ incremental: false, unimportantInput: 'h-now' })).toEqual(['ask', true]);
  });

  it('a sync leaves an untouched entity without an attribute as it is, without computing its input', () => {
    expect(decide({ touched: false })).toEqual(['leave', false]);
  });

  it('a sync leaves a touched entity judged not important before with the same input', () => {
    expect(decide({ unimportantInput: 'h-now' })).toEqual(['leave', true]);
    expect(decide({ unimportantInput: 'h-before' })).toEqual(['ask', true]);
  });

  it('keeps an attribute whose input is unchanged and asks again when it changed', () => {
    expect(decide({ hasAttribute: true, recordedInput: 'h-now', touched: false })).toEqual(['keep', true]);
    expect(decide({ hasAttribute: true, recordedInput: 'h-before', touched: false })).toEqual(['ask', true]);
    // A recorded "not important" input does not apply to an entity with an attribute.
    expect(decide({ hasAttribute: true, recordedInput: 'h-before', unimportantInput: 'h-now' })).toEqual([
      'ask',
      true,
    ]);
  });

  it('keeps an attribute without computing its input when nothing around its entity changed, under the same model', () => {
    const quiet = {
      hasAttribute: true,
      recordedInput: 'h-before',
      touched: false,
      neighbourhoodTouched: false,
    };
    expect(decide(quiet)).toEqual(['keep', false]);
    // Another chat model: every input hashes it, so each is computed (and differs).
    expect(decide({ ...quiet, sameModel: false })).toEqual(['ask', true]);
    // A neighbour changed, or the entity itself: computed.
    expect(decide({ ...quiet, neighbourhoodTouched: true })).toEqual(['ask', true]);
    expect(decide({ ...quiet, touched: true })).toEqual(['ask', true]);
    // Not in a first build, and not for an entity without an attribute.
    expect(decide({ ...quiet, incremental: false })).toEqual(['ask', true]);
    expect(decide({ ...quiet, hasAttribute: false, recordedInput: undefined })).toEqual(['leave', false]);
  });

  it('restores a retired attribute whose input is the same again', () => {
    expect(decide({ retiredInput: 'h-now' })).toEqual(['restore', true]);
    expect(decide({ retiredInput: 'h-before' })).toEqual(['ask', true]);
  });

  it('an attribute of an older index (no recorded input) is kept until its entity changes', () => {
    expect(decide({ hasAttribute: true, touched: false })).toEqual(['keep', false]);
    expect(decide({ hasAttribute: true, touched: true })).toEqual(['ask', true]);
  });
});
