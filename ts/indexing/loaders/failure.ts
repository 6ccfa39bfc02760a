/** A loader's reason for rejecting a document; extract.ts attaches the path. */
export class ExtractionFailure extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'ExtractionFailure';
  }
}
