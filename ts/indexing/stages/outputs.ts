/**
 * What a stage hands to its commit: tables and files staged in cache/.staging/ through one
 * StageCommit. The run loop adds info/indices.json and the advanced info/state.json and
 * commits them all together (docs/method.md §4.4).
 */
import { writeTableFile } from '../../index-io/parquet.js';
import type { IndexTable } from '../../index-io/table-spec.js';
import type { StageCommit } from '../commit.js';

export class StageOutputs {
  constructor(private readonly commit: StageCommit) {}

  /** Stage the whole of a parquet table (`dim`, config.dim, for a table with vectors). */
  async table<R>(table: IndexTable<R>, rows: Iterable<R>, dim?: number): Promise<void> {
    await writeTableFile(this.commit.stagedPathFor(table.file), table.write(rows, dim));
  }

  /** Stage a text or binary file. */
  async file(destination: string, data: string | Uint8Array): Promise<void> {
    await this.commit.put(destination, data);
  }

  /** The staging path for a file a native writer produces itself (HNSW.bin). */
  pathFor(destination: string): string {
    return this.commit.stagedPathFor(destination);
  }

  get staged(): readonly string[] {
    return this.commit.staged;
  }
}
