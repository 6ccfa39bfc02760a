/**
 * Document pipeline (docs/method.md §3.2): extraction and chunking of the cycle's documents.
 *
 * - renamed: the old path's document row and map entry move to the new path;
 * - duplicate (a copy of an indexed file): a new document row sharing the existing chunks,
 *   nothing extracted, no model call;
 * - new: extracted, cleaned, chunked; chunk ids already indexed are listed for the document
 *   but not repeated in text.parquet.
 * A document that cannot be read or parsed, or has no text, is skipped with a warning and
 * left out of document_hash.json, so the next build retries it.
 */
import { NodeRagError } from '../../errors.js';
import {
  ATTRIBUTE_INPUTS_FILE,
  type AttributeInputs,
  serializeAttributeInputs,
} from '../../index-io/attribute-inputs.js';
import { serializeDecompositions } from '../../index-io/decomposition.js';
import { ELEMENT_MEMBERS_FILE, serializeElementMembers } from '../../index-io/element-members.js';
import type { IndexData } from '../../index-io/index-data.js';
import {
  RETIRED_VECTORS_FILE,
  type RetiredVector,
  serializeRetiredVectors,
} from '../../index-io/retired-vectors.js';
import { TABLES } from '../../index-io/tables.js';
import { type PruneResult, pruneChunks } from '../../model/prune.js';
import type { AttributeRow, DocumentRow, SemanticUnitRow, TextRow } from '../../model/types.js';
import { CACHE_FILES, INFO_FILES } from '../../project/layout.js';
import { textId } from '../../text/index.js';
import { buildSettings, serializeBuildSettings } from '../build-settings.js';
import { serializeCycleSync } from '../cycle-sync.js';
import { compareCodePoints } from '../discover.js';
import { documentFormat, type ExtractedDocument, extractFiles } from '../extract.js';
import { type DocumentHashes, serializeDocumentHashes, withCycleDocuments } from '../info-files.js';
import { count, visibleName } from '../tree.js';
import { serializeUnindexable, type UnindexableRecord } from '../unindexable.js';
import type { CycleSync, StageContext, StageResult } from './context.js';
import { chunkDocument, textOps } from './core.js';
import { stageGraphTables } from './graph.js';

/** Documents chunked ahead of the one the Document stage is taking in (the pool has 4 threads). */
const CHUNK_AHEAD = 16;

/** Number of Unicode code points (char_count counts characters, not UTF-16 units). */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

export async function documentStage(ctx: StageContext): Promise<StageResult> {
  const { plan, g, counters } = ctx;
  const chunkSize = ctx.config.config.chunk_size;
  // Deleted and changed paths: their rows go (a changed path is added again below).
  const removedPaths = new Set([...plan.deleted, ...plan.changed]);
  // A removal needs every table (pruneUnlisted): their reads start now, on the pool, and
  // overlap with each other and with the extraction of the new documents.
  if (removedPaths.size > 0) readAhead(ctx.index);
  const [documents, texts] = await Promise.all([ctx.index.documents(), ctx.index.texts()]);
  // Rows as committed: a copy of a changed document's old content copies the old row.
  const previous = [...documents];
  // Whose text each chunk row holds, before this cycle's changes (see restatedChunks).
  const ownerBefore = firstListing(previous);
  for (let i = documents.length - 1; i >= 0; i--) {
    if (removedPaths.has(documents[i]!.path)) documents.splice(i, 1);
  }

  // Renamed paths: the row moves with its content.
  for (const r of plan.renamed) {
    const row = documents.find((d) => d.path === r.from);
    if (row) row.path = r.path;
  }

  const renamed = new Set(plan.renamed.map((r) => r.path));
  const duplicateOf = new Map(plan.duplicate.map((d) => [d.path, d.of]));
  const hashOf = new Map(plan.files.map((f) => [f.path, f.hash]));
  const adds = plan.cycle.filter((p) => !renamed.has(p)).sort(compareCodePoints);

  // Copies of indexed documents reuse their rows' chunks; everything else is extracted.
  const sourceRow = (path: string): DocumentRow | undefined => {
    const of = duplicateOf.get(path);
    return of === undefined ? undefined : previous.find((d) => d.path === of);
  };
  const toExtract = plan.files.filter((f) => adds.includes(f.path) && sourceRow(f.path) === undefined);
  ctx.progress.begin(toExtract.length, 'documents');
  const extracted = new Map<string, ExtractedDocument>();
  const skipped: { path: string; reason: string }[] = [];
  const results = await extractFiles(toExtract, {
    onResult: (_r, done) => ctx.progress.update(done),
  });
  // Contents that cannot be indexed stay out of later cycles until they change (unindexable.ts):
  // those discovery left out again, and this cycle's failures that follow from the bytes.
  const unindexable: UnindexableRecord = new Map(
    plan.unindexable.map((u) => [u.path, { hash: u.hash, reason: u.reason }]),
  );
  for (const r of results) {
    if (r.ok) extracted.set(r.document.path, r.document);
    else {
      skipped.push({ path: r.error.path, reason: r.error.reason });
      if (r.hash !== undefined) unindexable.set(r.error.path, { hash: r.hash, reason: r.error.reason });
    }
  }
  ctx.stop.check();

  // Chunking runs on the libuv pool; documents are chunked a window ahead of the loop below,
  // which takes their chunks in order (ids and counters are assigned in `adds` order). One
  // await per document in turn left the main thread idle for most of the stage.
  const toChunk = adds.filter((path) => !sourceRow(path) && extracted.has(path));
  const position = new Map(toChunk.map((path, i) => [path, i]));
  const chunking = new Map<string, ReturnType<typeof chunkDocument>>();
  let started = 0;
  /** The chunks of `path`, the documents up to CHUNK_AHEAD after it started meanwhile. */
  const chunksOf = (path: string) => {
    for (
      const last = position.get(path)! + CHUNK_AHEAD;
      started < toChunk.length && started <= last;
      started++
    ) {
      const next = toChunk[started]!;
      const pending = chunkDocument(extracted.get(next)!.text, chunkSize);
      pending.catch(() => undefined); // a failure is thrown where its chunks are awaited
      chunking.set(next, pending);
    }
    const pending = chunking.get(path)!;
    chunking.delete(path); // its chunks are not kept past their document
    return pending;
  };

  const added: { path: string; hash: string }[] = [];
  /** The chunks of the documents chunked this cycle, by path and id (see restatedChunks). */
  const cycleChunks = new Map<string, Map<string, CycleChunk>>();
  let newChunks = 0;
  let sharedChunks = 0;
  for (const path of adds) {
    const source = sourceRow(path);
    const doc = extracted.get(path);
    if (!source && !doc) continue; // skipped
    counters.document_index += 1;
    const docId = counters.document_index;
    const hash = doc?.hash ?? hashOf.get(path)!;
    const row: DocumentRow = {
      docId,
      docHashId: hash,
      path,
      format: documentFormat(path) ?? 'txt',
      textIds: [],
      textHashIds: [],
      charCount: 0,
      generation: g,
    };
    if (source) {
      row.textIds = [...source.textIds];
      row.textHashIds = [...source.textHashIds];
      row.charCount = source.charCount;
      sharedChunks += row.textIds.length;
    } else if (doc) {
      row.charCount = codePoints(doc.text);
      const chunks = await chunksOf(path);
      const mine = new Map<string, CycleChunk>();
      cycleChunks.set(path, mine);
      chunks.forEach((chunk, position) => {
        const id = textId(chunk.text);
        if (row.textHashIds.includes(id)) return; // a repeated passage is one chunk of the document
        mine.set(id, { text: chunk.text, tokens: chunk.tokens, position });
        let t = texts.get(id);
        if (t) {
          sharedChunks++;
        } else {
          counters.text_unit_index += 1;
          t = {
            textId: counters.text_unit_index,
            hashId: id,
            context: chunk.text,
            docId,
            docHashId: hash,
            chunkIndex: position,
            tokenCount: chunk.tokens,
            embedding: null,
            generation: g,
          } satisfies TextRow;
          texts.set(id, t);
          newChunks++;
        }
        row.textIds.push(t.textId);
        row.textHashIds.push(id);
      });
    }
    documents.push(row);
    added.push({ path, hash });
  }

  const indexedThisCycle = added.length + plan.renamed.length;
  if (g === 1 && indexedThisCycle === 0) {
    const list = skipped.map((s) => `${visibleName(s.path)} (${s.reason})`).join(', ');
    throw new NodeRagError(
      'no_documents',
      `no supported documents in input/ could be read${list ? `: ${list}` : ''}; fix or remove them and run the build again`,
    );
  }

  if (documents.length === 0) {
    // Every indexed document was deleted or changed, and none of the changed or new ones
    // could be read (e.g. each file emptied); INIT refuses a plain deletion of all up front.
    const list = skipped.map((s) => `${visibleName(s.path)} (${s.reason})`).join(', ');
    throw new NodeRagError(
      'no_documents',
      `no document would be left in the index: every indexed document was deleted or changed${list ? `, and these could not be read: ${list}` : ''}; an index needs at least one document: fix them or put documents in input/ and run the build again`,
    );
  }

  // Chunks whose text must change (below) go as removed chunks do, then come back as new ones.
  const restated = await restatedChunks(texts, ownerBefore, documents, cycleChunks, plan.files, chunkSize);
  // Chunks no document lists any more leave the index with what only they support.
  const pruned =
    removedPaths.size > 0 || restated.size > 0
      ? await pruneUnlisted(ctx, documents, new Set(restated.keys()))
      : null;
  for (const [id, r] of restated) {
    texts.set(id, {
      textId: r.textId,
      hashId: id,
      context: r.text,
      docId: r.owner.docId,
      docHashId: r.owner.docHashId,
      chunkIndex: r.position,
      tokenCount: r.tokens,
      embedding: null,
      generation: g,
    });
  }
  const removedChunks = (pruned?.removed.text ?? []).filter((id) => !restated.has(id));

  const kept: DocumentHashes = Object.assign(Object.create(null), ctx.hashes);
  for (const path of removedPaths) delete kept[path];
  const hashes = withCycleDocuments(kept, added, plan.renamed);
  await ctx.out.table(TABLES.documents, documents);
  await ctx.out.table(TABLES.text, texts.values(), ctx.config.config.dim);
  await ctx.out.file(INFO_FILES.documentHash, serializeDocumentHashes(hashes));
  await ctx.out.file(INFO_FILES.unindexable, serializeUnindexable(unindexable));

  const changedPaths = new Set(plan.changed);
  const sync: CycleSync = {
    added: added.filter((a) => !changedPaths.has(a.path)).map((a) => a.path),
    changed: [...plan.changed],
    deleted: [...plan.deleted],
    renamed: plan.renamed.map((r) => ({ ...r })),
    removedChunks,
    removedUnits: pruned?.removed.semantic_unit ?? [],
    removedEntities: pruned?.removed.entity ?? [],
    removedRelationships: pruned?.removed.relationship ?? [],
    skipped: skipped.map((s) => ({ ...s })),
  };
  await ctx.out.file(INFO_FILES.cycleSync, serializeCycleSync(g, sync));
  // Recorded by a cycle that indexes every document (a first build, a --rebuild) only: after
  // a sync under changed settings the index holds both, and the build keeps saying so.
  if (!ctx.state.is_incremental) {
    await ctx.out.file(
      INFO_FILES.buildSettings,
      serializeBuildSettings(buildSettings(ctx.config, ctx.providers.chat.identity)),
    );
  }

  // A file name is printed as the state tree shows it: a newline in it cannot forge a line.
  for (const s of skipped) ctx.progress.note(`skipped ${visibleName(s.path)}: ${s.reason}`);
  // Copies of indexed content are added documents too, counted apart as the state tree lists them.
  const copies = new Set(plan.duplicate.map((d) => d.path));
  const copiedCount = sync.added.filter((path) => copies.has(path)).length;
  const addedCount = sync.added.length - copiedCount;
  const removedSummary =
    removedPaths.size > 0 ? `, ${plan.changed.length} changed, ${plan.deleted.length} deleted` : '';
  const prunedSummary = pruned
    ? `, ${count(removedChunks.length, 'chunk')} removed${restated.size > 0 ? `, ${count(restated.size, 'chunk')} restated` : ''} (${count(pruned.removed.semantic_unit.length, 'unit')}, ${count(pruned.removed.entity.length, 'entity', 'entities')}, ${count(pruned.removed.relationship.length, 'relationship')})`
    : '';
  return {
    counts: { items: added.length + plan.renamed.length + plan.deleted.length, drops: skipped.length },
    summary: `${count(addedCount, 'document')} added${copiedCount > 0 ? ` (and ${count(copiedCount, 'duplicate')})` : ''}, ${plan.renamed.length} renamed${removedSummary}, ${skipped.length} skipped; ${count(newChunks, 'new chunk')}, ${sharedChunks} shared${prunedSummary}`,
    skipped,
    attempted: [...plan.cycle],
  };
}

/** A chunk of a document chunked this cycle. */
interface CycleChunk {
  text: string;
  tokens: number;
  /** Its position among the document's chunks. */
  position: number;
}

/** A chunk row to make again in another form: the form, its first document, the row's number. */
type Restated = CycleChunk & { owner: DocumentRow; textId: number };

/**
 * For each chunk id, the first document by path that lists it; in a clean build's text_id
 * order (documents by path, chunks in document order), which the Graph stage uses too.
 */
export function firstListing(rows: readonly DocumentRow[]): Map<string, DocumentRow> {
  const owner = new Map<string, DocumentRow>();
  for (const d of [...rows].sort((a, b) => compareCodePoints(a.path, b.path))) {
    for (const id of d.textHashIds) if (!owner.has(id)) owner.set(id, d);
  }
  return owner;
}

/**
 * Chunk rows whose text must change although their id does not. A chunk's id is a hash of
 * its normalised text (NFKC, whitespace collapsed), so files may hold it in forms that differ
 * in whitespace or compatibility characters; a clean build stores (and decomposes) the form of
 * the first file by path that holds it. A row keeps the form of the document it was taken
 * from, so when that first document is another one after this cycle (the file was edited in
 * whitespace only, deleted, renamed, or a new file comes first), the row takes the new first
 * document's form, and the chunk is decomposed again if that differs. A first document with
 * the same content as before (bytes and format: an HTML loader collapses whitespace a text
 * loader keeps) holds the same form: nothing to read. One that was not chunked
 * this cycle (an unchanged file now first) is chunked again to see its form.
 */
async function restatedChunks(
  texts: ReadonlyMap<string, TextRow>,
  ownerBefore: ReadonlyMap<string, DocumentRow>,
  documents: readonly DocumentRow[],
  cycleChunks: ReadonlyMap<string, ReadonlyMap<string, CycleChunk>>,
  files: readonly { path: string; absPath: string }[],
  chunkSize: number,
): Promise<Map<string, Restated>> {
  const out = new Map<string, Restated>();
  const reread = new Map<string, { owner: DocumentRow; ids: string[] }>();
  for (const [id, owner] of firstListing(documents)) {
    const row = texts.get(id);
    const before = ownerBefore.get(id);
    if (!row || (before?.docHashId === owner.docHashId && before.format === owner.format)) continue;
    const chunked = cycleChunks.get(owner.path);
    if (chunked) {
      const form = chunked.get(id);
      if (form && form.text !== row.context) out.set(id, { ...form, owner, textId: row.textId });
      continue;
    }
    const entry = reread.get(owner.path) ?? { owner, ids: [] };
    entry.ids.push(id);
    reread.set(owner.path, entry);
  }
  if (reread.size === 0) return out;
  const where = new Map(files.map((f) => [f.path, f.absPath]));
  const results = await extractFiles(
    [...reread.keys()].flatMap((path) => (where.has(path) ? [{ path, absPath: where.get(path)! }] : [])),
  );
  for (const r of results) {
    // A file that cannot be read now keeps the rows as they are (its next change re-reads it).
    if (!r.ok) continue;
    const { owner, ids } = reread.get(r.document.path)!;
    const forms = new Map<string, CycleChunk>();
    (await chunkDocument(r.document.text, chunkSize)).forEach((chunk, position) => {
      const id = textId(chunk.text);
      if (!forms.has(id)) forms.set(id, { text: chunk.text, tokens: chunk.tokens, position });
    });
    for (const id of ids) {
      const form = forms.get(id);
      const row = texts.get(id)!;
      if (form && form.text !== row.context) out.set(id, { ...form, owner, textId: row.textId });
    }
  }
  return out;
}

/**
 * Starts loading the tables a removal reads (IndexData keeps the pending loads, so the later
 * awaits take them over). A failed read is reported by that await; until then it is handled
 * here, so a stage that ends earlier (no document could be read) leaves no unhandled rejection.
 */
function readAhead(index: IndexData): void {
  const loads: Promise<unknown>[] = [
    index.units(),
    index.entities(),
    index.relationships(),
    index.attributes(),
    index.elements(),
    index.titles(),
    index.decompositions(),
    index.elementMembers(),
    index.attributeInputs(),
    index.graph(),
  ];
  for (const load of loads) load.catch(() => undefined);
}

/**
 * The attributes a sync removes wait in `retired` for the Attribute stage of the cycle, which
 * puts one back without a model call when its entity is important again and its prompt input
 * hashes the same (an edit re-adds most of a file's entities unchanged). Only attributes whose
 * input was recorded can be matched.
 */
function retireAttributes(
  removed: readonly string[],
  before: ReadonlyMap<string, AttributeRow>,
  recorded: AttributeInputs,
): void {
  for (const id of removed) {
    const input = recorded.inputs.get(id);
    const row = before.get(id);
    recorded.inputs.delete(id);
    if (input === undefined || !row) continue;
    recorded.retired.set(id, {
      input,
      humanReadableId: row.humanReadableId,
      context: row.context,
      embedding: row.embedding,
      generation: row.generation,
      updatedGeneration: row.updatedGeneration,
    });
  }
}

/**
 * The vectors of the units a sync removes, for the Graph stage of the cycle: a unit added
 * again with the same text takes its vector and generation back.
 */
function retireUnitVectors(
  removed: readonly string[],
  before: ReadonlyMap<string, SemanticUnitRow>,
): Map<string, RetiredVector> {
  const out = new Map<string, RetiredVector>();
  for (const id of removed) {
    const row = before.get(id);
    if (row?.embedding) {
      out.set(id, { generation: row.generation, embedding: row.embedding, context: row.context });
    }
  }
  return out;
}

/**
 * Removes the chunks no document lists (docs/method.md §4.5) and everything only they
 * support (ts/model/prune.ts), and stages every table that changed. A kept chunk whose
 * document was removed moves to the first remaining document that lists it.
 */
async function pruneUnlisted(
  ctx: StageContext,
  documents: readonly DocumentRow[],
  /** Listed chunks to remove all the same (restated: they come back with new text). */
  restated: ReadonlySet<string>,
): Promise<PruneResult> {
  const texts = await ctx.index.texts();
  const listedBy = new Map<string, DocumentRow>();
  for (const d of [...documents].sort((a, b) => a.docId - b.docId)) {
    for (const id of d.textHashIds) if (!listedBy.has(id)) listedBy.set(id, d);
  }
  const docIds = new Set(documents.map((d) => d.docId));
  const unlisted = new Set<string>();
  for (const [id, t] of texts) {
    const owner = listedBy.get(id);
    if (!owner || restated.has(id)) unlisted.add(id);
    else if (!docIds.has(t.docId)) {
      t.docId = owner.docId;
      t.docHashId = owner.docHashId;
      t.chunkIndex = owner.textHashIds.indexOf(id);
    }
  }
  // Read together: each table is decoded on the native pool while the main thread turns the
  // one before into rows (one after the other, the pool and the main thread took turns).
  const i = ctx.index;
  const [read, graph] = await Promise.all([
    allOf({
      units: i.units(),
      entities: i.entities(),
      relationships: i.relationships(),
      attributes: i.attributes(),
      elements: i.elements(),
      titles: i.titles(),
      decompositions: i.decompositions(),
      elementMembers: i.elementMembers(),
    }),
    i.graph(),
  ]);
  const tables = { texts, ...read };
  const attributesBefore = new Map(tables.attributes);
  const unitsBefore = new Map(tables.units);
  const membersBefore = tables.elementMembers.size;
  const result = pruneChunks(unlisted, tables, graph, ctx.g, textOps);
  if (unlisted.size === 0 && result.changed === 0) return result;
  const { removed } = result;
  const dim = ctx.config.config.dim;
  await ctx.out.file(CACHE_FILES.textDecomposition, serializeDecompositions(tables.decompositions.values()));
  await ctx.out.table(TABLES.units, tables.units.values(), dim);
  await ctx.out.table(TABLES.entities, tables.entities.values());
  await ctx.out.table(TABLES.relationships, tables.relationships.values());
  await stageGraphTables(ctx.index, ctx.out);
  // The derived tables only when the removal reached them (a table left out of the commit
  // stays as committed, which is then what the tables in memory hold).
  if (removed.attribute.length > 0) {
    const attributeInputs = await ctx.index.attributeInputs();
    retireAttributes(removed.attribute, attributesBefore, attributeInputs);
    await ctx.out.table(TABLES.attributes, tables.attributes.values(), dim);
    await ctx.out.file(ATTRIBUTE_INPUTS_FILE, serializeAttributeInputs(attributeInputs));
  }
  if (removed.high_level_element.length > 0 || removed.high_level_element_title.length > 0) {
    await ctx.out.table(TABLES.elements, tables.elements.values(), dim);
    await ctx.out.table(TABLES.titles, tables.titles.values());
  }
  if (removed.high_level_element.length > 0 || tables.elementMembers.size !== membersBefore) {
    await ctx.out.file(ELEMENT_MEMBERS_FILE, serializeElementMembers(tables.elementMembers));
  }
  const retiredVectors = retireUnitVectors(removed.semantic_unit, unitsBefore);
  if (retiredVectors.size > 0) {
    await ctx.out.file(RETIRED_VECTORS_FILE, serializeRetiredVectors(retiredVectors));
  }
  return result;
}

/** The values of an object of promises, awaited together, under the same keys. */
async function allOf<T extends Record<string, Promise<unknown>>>(
  o: T,
): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const keys = Object.keys(o);
  const values = await Promise.all(Object.values(o));
  return Object.fromEntries(keys.map((k, j) => [k, values[j]])) as { [K in keyof T]: Awaited<T[K]> };
}
