/**
 * The commented Node_config.yaml written on first run (docs/method.md §7.6): every key with its
 * default and a one-line comment, all taken from the schema, and `main_folder` set to the
 * absolute folder.
 */
import { stringify } from 'yaml';
import type { z } from 'zod';
import { defaultConfigData, nodeConfigSchema, SECTION_COMMENTS, type SectionName } from './schema.js';

export const CONFIG_FILE_NAME = 'Node_config.yaml';

function scalar(value: unknown): string {
  // yaml.stringify of a scalar ends with a newline; strings that need quotes get them.
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

/** Renders the template for `absFolder` (already absolute). */
export function renderConfigTemplate(absFolder: string): string {
  const defaults = defaultConfigData();
  defaults.config.main_folder = absFolder;
  const lines: string[] = [
    '# noderag configuration. Every key is optional: a missing key takes the default shown here.',
    '# Providers: openai (also any OpenAI-compatible server via base_url), gemini, or local',
    '# (offline and deterministic, for tests and demos). API keys may be left null and given as',
    '# OPENAI_API_KEY / GEMINI_API_KEY (then GOOGLE_API_KEY) in the environment instead.',
  ];
  const sections = Object.keys(nodeConfigSchema.shape) as SectionName[];
  for (const section of sections) {
    lines.push('', `# ${SECTION_COMMENTS[section]}`, `${section}:`);
    const shape = nodeConfigSchema.shape[section].shape as Record<string, z.ZodType>;
    const values = defaults[section] as Record<string, unknown>;
    for (const [key, field] of Object.entries(shape)) {
      if (field.description) lines.push(`  # ${field.description}`);
      lines.push(`  ${key}: ${scalar(values[key])}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
