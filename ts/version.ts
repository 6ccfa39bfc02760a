import { callNative, native } from './native.js';

/** Version string of the native core (the Rust crates behind the addon). */
export function nativeVersion(): string {
  return callNative(() => native.nativeVersion());
}
