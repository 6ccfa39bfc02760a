/**
 * Exact-phrase matching (docs/method.md §6.3) over entity names and title texts: whole tokens,
 * case-insensitive, Unicode-aware (a run of CJK ideographs is one token; punctuation such as
 * `C++` or `U.S.` is matched character by character). Built once, off the main thread;
 * `find` walks a positional token index, so its cost follows the postings, not the names.
 */
import { callNative, callNativeAsync, type NativeAddon, native } from '../native.js';

type NativePhraseMatcher = InstanceType<NativeAddon['PhraseMatcher']>;

export class PhraseMatcher<Id = number> {
  readonly #native: NativePhraseMatcher;
  readonly #ids: readonly Id[] | undefined;

  private constructor(handle: NativePhraseMatcher, ids: readonly Id[] | undefined) {
    this.#native = handle;
    this.#ids = ids;
  }

  /** Indexes `names`; `find` reports name indexes. */
  static async build(names: readonly string[]): Promise<PhraseMatcher<number>> {
    const handle = await callNativeAsync(() => native.PhraseMatcher.build([...names]));
    return new PhraseMatcher<number>(handle, undefined);
  }

  /** Indexes `entries` (id, name); `find` reports the ids. */
  static async buildWithIds<T>(entries: readonly (readonly [T, string])[]): Promise<PhraseMatcher<T>> {
    const handle = await callNativeAsync(() => native.PhraseMatcher.build(entries.map((e) => e[1])));
    return new PhraseMatcher<T>(
      handle,
      entries.map((e) => e[0]),
    );
  }

  /** Every name containing one of `phrases` as whole tokens, in name order, each once. Empty phrases match nothing. */
  find(phrases: readonly string[]): Id[] {
    const hits = callNative(() => this.#native.find([...phrases]));
    const ids = this.#ids;
    return ids ? Array.from(hits, (i) => ids[i]!) : (Array.from(hits) as Id[]);
  }

  get nameCount(): number {
    return callNative(() => this.#native.nameCount);
  }

  /** Frees the native index. Idempotent; later calls throw ClosedError. */
  close(): void {
    callNative(() => this.#native.close());
  }
}

/** The tokens the matcher sees for `text` (fold, then tokenise); for diagnostics. */
export function phraseTokens(text: string): string[] {
  return callNative(() => native.phraseTokens(text));
}
