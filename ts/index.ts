/**
 * Public library API of noderag. See README.md for usage.
 */
export * from './errors.js';
export { nativeVersion } from './version.js';
