/**
 * Text pipeline (docs/method.md §3.3): one structured decomposition call (prompt D) per chunk of
 * generation g without an `ok` record, concurrently under the provider's limiter and
 * through the response cache; results applied in `text_id` order. Relationship strings are
 * parsed by the Rust core (steps 1–4); the ones it cannot split get a repair call (prompt
 * R); what still fails is dropped and logged.
 *
 * A chunk whose call fails after the retries gets a `failed` record; then the stage fails
 * listing their text_ids, unless `--allow-failures`. An authentication or not-found error
 * (which no retry can fix) fails the stage at once.
 */
import { NodeRagError, ProviderError } from '../../errors.js';
import { appendedDecompositions, serializeDecompositions } from '../../index-io/decomposition.js';
import type { DecompositionUnit } from '../../llm/types.js';
import type { DecompositionRecord, ParsedUnit, TextRow } from '../../model/types.js';
import { CACHE_FILES } from '../../project/layout.js';
import { count } from '../tree.js';
import type { StageContext, StageResult } from './context.js';
import { finalizeUnit, parseUnitStrings, type Triple } from './core.js';
import { mapInOrder, poolSize } from './pool.js';

/** Errors no retry can fix: stop the stage rather than fail every chunk the same way. */
function isFatal(error: unknown): boolean {
  return error instanceof ProviderError && !error.retryable && [401, 403, 404].includes(error.status ?? 0);
}

const DROP_REASONS: Record<string, string> = {
  same_entity: 'both ends are the same entity',
  empty_part: 'an end or the relation is empty after normalisation',
};

/** Parse, repair and finalise the relationships of one unit. */
async function parseUnit(
  ctx: StageContext,
  unit: DecompositionUnit,
  dropped: DecompositionRecord['dropped'],
): Promise<ParsedUnit> {
  const language = ctx.config.config.language;
  // One native call for the unit; it also finalises when no string needs a repair call.
  const unitParse = parseUnitStrings(unit.entities, unit.relationships, language);
  const entities = unitParse.entities;
  const triples: Triple[] = [];
  const inputs: string[] = [];
  for (const [i, parsed] of unitParse.parses.entries()) {
    const raw = unit.relationships[i]!;
    if (parsed.kind === 'parsed') {
      triples.push({ source: parsed.source, relation: parsed.relation, target: parsed.target });
      inputs.push(raw);
      continue;
    }
    if (parsed.kind === 'empty') {
      dropped.push({ input: raw, reason: 'empty relationship string' });
      continue;
    }
    const repaired = await ctx.providers.run('repair', { relationship: raw, entities }, ctx.stop.callOptions);
    if (repaired.source && repaired.relationship && repaired.target) {
      triples.push({ source: repaired.source, relation: repaired.relationship, target: repaired.target });
      inputs.push(raw);
    } else {
      dropped.push({
        input: raw,
        reason: 'not SOURCE, RELATION, TARGET and the repair call gave no complete triple',
      });
    }
  }
  const final = unitParse.final ?? finalizeUnit(entities, triples, language);
  for (const d of final.dropped) {
    dropped.push({ input: inputs[d.index] ?? '', reason: DROP_REASONS[d.reason] ?? d.reason });
  }
  return { semantic_unit: unit.semantic_unit, entities: final.entities, relationships: final.relationships };
}

async function decompose(ctx: StageContext, chunk: TextRow): Promise<DecompositionRecord> {
  const base = { text_hash_id: chunk.hashId, text_id: chunk.textId, generation: ctx.g };
  try {
    const reply = await ctx.providers.run('decompose', { text: chunk.context }, ctx.stop.callOptions);
    const dropped: DecompositionRecord['dropped'] = [];
    const units: ParsedUnit[] = [];
    for (const unit of reply.Output) units.push(await parseUnit(ctx, unit, dropped));
    return { ...base, status: 'ok', response: reply, units, dropped, error: null };
  } catch (error) {
    if (isFatal(error) || ctx.stop.stopping) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, status: 'failed', response: null, units: [], dropped: [], error: message };
  }
}

export async function textStage(ctx: StageContext): Promise<StageResult> {
  const texts = await ctx.index.texts();
  const records = await ctx.index.decompositions();
  const chunks = [...texts.values()]
    .filter((t) => t.generation === ctx.g && records.get(t.hashId)?.status !== 'ok')
    .sort((a, b) => a.textId - b.textId);

  const before = ctx.providers.chat.stats();
  const note = () => {
    const s = ctx.providers.chat.stats();
    return `calls ${s.calls - before.calls}, cache hits ${s.cacheHits - before.cacheHits}`;
  };
  ctx.progress.begin(chunks.length, 'chunks');
  const local = ctx.providers.chat.identity.provider === 'local';
  const results = await mapInOrder(chunks, (chunk) => decompose(ctx, chunk), {
    concurrency: poolSize(ctx.config.model_config.rate_limit, local, ctx.config.model_config.max_in_flight),
    stop: ctx.stop,
    onProgress: (done) => ctx.progress.update(done, note()),
  });

  // The committed file is serializeDecompositions of the records before this stage: new
  // records that all come after them are appended to it (computed before they are applied).
  const appended = appendedDecompositions(records, results);
  // Applied in text_id order, whatever order the calls finished in.
  for (const r of results) records.set(r.text_hash_id, r);
  const failed = results.filter((r) => r.status === 'failed');
  let drops = 0;
  for (const r of results) {
    for (const d of r.dropped) {
      drops++;
      ctx.log.warn(`dropped relationship of text ${r.text_id}: ${JSON.stringify(d.input)} (${d.reason})`);
    }
  }
  if (failed.length > 0) {
    const ids = failed.map((r) => r.text_id).join(', ');
    // Its message says whether it was retried ("gave up after 6 attempts"); an error that is
    // not retried (HTTP 400, a reply cut at max_tokens) failed at its first attempt.
    const first = failed[0]!.error;
    if (!ctx.allowFailures) {
      throw new NodeRagError(
        'stage_failed',
        `decomposition failed for ${failed.length} chunk(s) (text_id ${ids}); first error: ${first}. Run again to retry, or pass --allow-failures to go on without them`,
      );
    }
    ctx.log.warn(
      `--allow-failures: ${failed.length} chunk(s) failed and contribute nothing (text_id ${ids}); first error: ${first}`,
    );
    ctx.progress.note(`${count(failed.length, 'chunk')} failed (allowed): text_id ${ids}`);
  }

  if (appended === null) {
    await ctx.out.file(CACHE_FILES.textDecomposition, serializeDecompositions(records.values()));
  } else {
    await ctx.out.appendToCommitted(CACHE_FILES.textDecomposition, appended);
  }
  const s = ctx.providers.chat.stats();
  const units = results.reduce((n, r) => n + r.units.length, 0);
  return {
    counts: {
      items: chunks.length,
      calls: s.calls - before.calls,
      cacheHits: s.cacheHits - before.cacheHits,
      retries: s.retries - before.retries,
      drops,
    },
    summary: `${count(chunks.length, 'chunk')}, ${count(units, 'unit')}, ${failed.length} failed, ${count(drops, 'relationship')} dropped; ${note()}`,
  };
}
