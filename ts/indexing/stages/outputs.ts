/**
 * What a stage hands to its commit: tables and files staged in cache/.staging/ through one
 * StageCommit. The run loop adds info/indices.json and the advanced info/state.json and
 * commits them all together (docs/method.md §4.4).
 */
import { readFile } from 'node:fs/promises';
import { writeTableFile } from '../../index-io/parquet.js';
import type { IndexTable } from '../../index-io/table-spec.js';
import { resolveInProject } from '../../project/layout.js';
import type { StageCommit } from '../commit.js';

export class StageOutputs {
  constructor(private readonly commit: StageCommit) {}

  /**
   * Stage the whole of a parquet table (`dim`, config.dim, for a table with vectors). The rows
   * are turned into columns now; the file is written on the pool while the stage goes on
   * (StageCommit.track), so later edits of the rows do not reach it.
   */
  async table<R>(table: IndexTable<R>, rows: Iterable<R>, dim?: number): Promise<void> {
    const columns = table.write(rows, dim);
    this.commit.track(writeTableFile(this.commit.stagedPathFor(table.file), columns));
  }

  /** Stage a text or binary file. */
  async file(destination: string, data: string | Uint8Array): Promise<void> {
    await this.commit.put(destination, data);
  }

  /**
   * Stage the committed file at `destination` (none: empty) followed by `suffix`: for a file
   * whose next version only adds lines at its end (text_decomposition.jsonl).
   */
  async appendToCommitted(destination: string, suffix: string): Promise<void> {
    let base: Buffer;
    try {
      base = await readFile(resolveInProject(this.commit.root, destination));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      base = Buffer.alloc(0);
    }
    // A file edited by hand may lack its last newline: the appended lines start on their own.
    const joint = base.length > 0 && base[base.length - 1] !== 0x0a ? '\n' : '';
    await this.commit.put(destination, Buffer.concat([base, Buffer.from(joint + suffix, 'utf8')]));
  }

  /** The staging path for a file a native writer produces itself (HNSW.bin). */
  pathFor(destination: string): string {
    return this.commit.stagedPathFor(destination);
  }

  get staged(): readonly string[] {
    return this.commit.staged;
  }
}
