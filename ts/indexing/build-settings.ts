/**
 * info/build_settings.json: the settings that shape what a cycle adds to the index but that
 * a sync does not re-apply to documents already indexed: `chunk_size` and `language` (how
 * chunks are cut and which prompts decompose them) and the chat model (who decomposes them).
 * Written in the Document stage's commit of a cycle that indexes every document (a first
 * build, a `--rebuild`): a sync under other settings leaves the record, so the note stays
 * until a rebuild makes the index uniform again. A build whose config differs says so before it
 * asks to start, and how to apply the change to every document (`--rebuild`, which reuses
 * every cached reply it can); without the note, a changed `chunk_size` was ignored in
 * silence ("Index is up to date.") and later syncs mixed chunk sizes.
 *
 * The record only feeds that note: a missing or unreadable one (an index of an older
 * version) reads as none.
 */
import type { NodeConfig } from '../config/node-config.js';
import { INFO_FILES, resolveInProject } from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';

export interface BuildSettings {
  chunk_size: number;
  language: string;
  /** `provider/model` of model_config. */
  chat_model: string;
}

export function buildSettings(config: NodeConfig, chat: { provider: string; model: string }): BuildSettings {
  return {
    chunk_size: config.config.chunk_size,
    language: config.config.language,
    chat_model: `${chat.provider}/${chat.model}`,
  };
}

export function serializeBuildSettings(s: BuildSettings): string {
  return `${JSON.stringify(s, null, 2)}\n`;
}

export async function readBuildSettings(root: string): Promise<BuildSettings | null> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.buildSettings)).catch(() => null);
  if (text === null) return null;
  try {
    const raw = JSON.parse(text) as Partial<BuildSettings>;
    if (
      typeof raw.chunk_size !== 'number' ||
      typeof raw.language !== 'string' ||
      typeof raw.chat_model !== 'string'
    )
      return null;
    return { chunk_size: raw.chunk_size, language: raw.language, chat_model: raw.chat_model };
  } catch {
    return null;
  }
}

/**
 * The settings that differ between the indexed documents and the config, as
 * `config.chunk_size 1048 → 64, …`, or null.
 */
export function buildSettingsChange(recorded: BuildSettings | null, now: BuildSettings): string | null {
  if (!recorded) return null;
  const names: Record<keyof BuildSettings, string> = {
    chunk_size: 'config.chunk_size',
    language: 'config.language',
    chat_model: 'model_config (provider/model_name)',
  };
  const changed = (Object.keys(names) as (keyof BuildSettings)[])
    .filter((k) => recorded[k] !== now[k])
    .map((k) => `${names[k]} ${recorded[k]} → ${now[k]}`);
  return changed.length > 0 ? changed.join(', ') : null;
}
