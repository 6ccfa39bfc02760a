/**
 * The state tree printed before any work, and the confirmation that follows
 * (docs/method.md §4.3). Rendering is a pure function of the state and the discovery plan.
 */
import { createInterface } from 'node:readline';
import {
  BUILD_STATES,
  type BuildState,
  isCycleDocumentSetFixed,
  isCycleUnfinished,
  startCycle,
  stateIndex,
} from '../project/state.js';
import { type DiscoveryPlan, SKIP_KIND_LABELS, type SkipKind, type SkippedEntry } from './discover.js';

/** Exit codes of `build` (docs/method.md §4.6); mirrors EXIT in ts/cli/exit.ts. */
export const BUILD_EXIT = {
  OK: 0,
  STAGE_FAILED: 1,
  USAGE: 2,
  CONFIG_CREATED: 3,
  DECLINED: 4,
  INTERRUPTED: 130,
} as const;

export const MESSAGES = {
  upToDate: 'Index is up to date.',
  cancelled: 'Build cancelled; nothing changed.',
  refuseNoTty: 'Refusing to prompt: not a terminal. Re-run with --yes to build non-interactively.',
  question: 'Start the build? [y/N] ',
  noDocuments: 'no supported documents in input/',
  allDeleted: 'every indexed document was deleted from input/',
} as const;

export const NAME_LIST_CAP = 20;

/** "1 document", "3 documents" (`plural` defaults to singular + "s"). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}

/**
 * The note of §3.1 for changed and deleted indexed documents, or null when there are none:
 * what the sync does with them (docs/method.md §4.5).
 */
export function changedDeletedNote(changed: number, deleted: number): string | null {
  if (changed === 0 && deleted === 0) return null;
  const parts: string[] = [];
  if (changed > 0) {
    parts.push(
      `${count(changed, 'changed document')} ${changed === 1 ? 'is' : 'are'} indexed again (the old version is removed; unchanged chunks are kept)`,
    );
  }
  if (deleted > 0) {
    parts.push(
      `${count(deleted, 'deleted document')} ${deleted === 1 ? 'is' : 'are'} removed from the index`,
    );
  }
  return `${parts.join('; ')}.`;
}

/** What "nothing to do" means: nothing new, changed or deleted since the last build. */
export function upToDateMessage(): string {
  return MESSAGES.upToDate;
}

/** "2 hidden, 1 unsupported type", in the order of SKIP_KIND_LABELS. */
export function skippedSummary(skipped: readonly SkippedEntry[]): string {
  const byKind = new Map<SkipKind, number>();
  for (const e of skipped) byKind.set(e.kind, (byKind.get(e.kind) ?? 0) + 1);
  return (Object.keys(SKIP_KIND_LABELS) as SkipKind[])
    .filter((k) => byKind.has(k))
    .map((k) => `${byKind.get(k)} ${SKIP_KIND_LABELS[k]}`)
    .join(', ');
}

/** "a, b, c" with at most `cap` names, then "… and N more". */
export function formatNameList(names: readonly string[], cap = NAME_LIST_CAP): string {
  const shown = names.slice(0, cap).map(visibleName).join(', ');
  return names.length <= cap ? shown : `${shown} … and ${names.length - cap} more`;
}

/** A file name with its control characters escaped (`new\nline.txt`): one line in the tree. */
export function visibleName(name: string): string {
  // C0/C1 controls, and the bidirectional formatting characters, which would reorder the rest
  // of the terminal line ("evil\u202Edm.txt" shows as "eviltxt.md").
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  return name.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** What this run will do, decided from the persisted state and the plan. */
export interface BuildOutlook {
  /** Whether anything will run (resume an unfinished cycle or start a new one). */
  hasWork: boolean;
  /** A new cycle (generation + 1) starts at the Document pipeline. */
  startsCycle: boolean;
  /** The state as it will be when work begins (after step 5 when a cycle starts). */
  view: BuildState;
  /** Documents found but left for a follow-up cycle because the running cycle's set is fixed. */
  queued: string[];
}

/**
 * Decide the outlook (run algorithm, steps 4–5). A project never built and with nothing to
 * index has no work; the caller turns that into the "no supported documents" error.
 */
export function buildOutlook(
  state: BuildState,
  plan: Pick<DiscoveryPlan, 'cycle' | 'deleted'>,
): BuildOutlook {
  if (isCycleUnfinished(state)) {
    const queued = isCycleDocumentSetFixed(state) ? [...plan.cycle] : [];
    return { hasWork: true, startsCycle: false, view: state, queued };
  }
  // Deleted documents alone are work too: the cycle removes them.
  if (plan.cycle.length === 0 && plan.deleted.length === 0) {
    return { hasWork: false, startsCycle: false, view: state, queued: [] };
  }
  return { hasWork: true, startsCycle: true, view: startCycle(state), queued: [] };
}

type Mark = 'done' | 'failed' | 'pending';

function stateMark(view: BuildState, name: (typeof BUILD_STATES)[number]): Mark {
  const current = stateIndex(view.current_state);
  const i = stateIndex(name);
  if (i < current) return 'done';
  if (i > current) return 'pending';
  if (view.current_state === 'FINISHED') return 'done';
  return view.error_type === 'NO_ERROR' ? 'pending' : 'failed';
}

export interface TreeInput {
  /** Project folder as shown in the header. */
  root: string;
  /** The persisted state (or `initialState()` for a project never built). */
  state: BuildState;
  plan: DiscoveryPlan;
  /** Response cache sizes, when known. */
  cache?: { replies: number; embeddings: number } | null;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The state tree, documents summary and cache line, one string ending in a newline. */
export function renderStateTree(input: TreeInput): string {
  const { plan } = input;
  const outlook = buildOutlook(input.state, plan);
  const view = outlook.view;
  const lines: string[] = [];
  // What this run will do with the generation: build it first, add to it, or nothing.
  const mode = !outlook.hasWork ? 'built' : view.generation <= 1 ? 'first build' : 'incremental';
  lines.push(`State tree: ${input.root} (generation ${Math.max(view.generation, 1)}, ${mode})`);

  for (const name of BUILD_STATES) {
    const mark = stateMark(view, name);
    let line = `  ${`[${mark}]`.padEnd(11)}${name}`;
    if (name === view.current_state && outlook.hasWork) {
      if (mark === 'failed') {
        const why = view.error_message ?? (view.error_type === 'INTERRUPTED' ? 'interrupted' : 'failed');
        line += `   <- resumes here: ${why}`;
      } else {
        line += outlook.startsCycle ? '   <- starts here' : '   <- resumes here';
      }
    }
    lines.push(line);
  }

  const skipped = plan.unreadable;
  const reasons = [...new Set(skipped.map((s) => s.reason))];
  const skippedText =
    skipped.length === 0
      ? ''
      : `, ${skipped.length} skipped${reasons.length === 1 ? ` (${reasons[0]})` : ''}`;
  const unindexableText =
    plan.unindexable.length === 0 ? '' : `, ${fmt(plan.unindexable.length)} not indexable`;
  lines.push(
    `Documents: ${fmt(plan.found)} found: ${fmt(plan.indexed.length)} indexed, ${fmt(plan.new.length)} new, ` +
      `${fmt(plan.duplicate.length)} duplicate, ${fmt(plan.renamed.length)} renamed, ` +
      `${fmt(plan.changed.length)} changed, ${fmt(plan.deleted.length)} deleted${unindexableText}${skippedText}`,
  );
  const list = (label: string, names: readonly string[]) => {
    if (names.length > 0) lines.push(`  ${label}: ${formatNameList(names)}`);
  };
  if (outlook.queued.length > 0) {
    list(`queued (indexed by a follow-up cycle after generation ${view.generation})`, outlook.queued);
  } else {
    list('new', plan.new);
    list(
      'duplicate',
      // Of a file that changed since: a copy of the version that is indexed, not of the file.
      plan.duplicate.map((d) =>
        plan.changed.includes(d.of)
          ? `${d.path} (copy of the indexed version of ${d.of})`
          : `${d.path} (copy of ${d.of})`,
      ),
    );
    list(
      'renamed',
      plan.renamed.map((r) => `${r.from} → ${r.path}`),
    );
  }
  list('changed', plan.changed);
  list('deleted', plan.deleted);
  list(
    'skipped',
    skipped.map((s) => `${s.path} (${s.reason})`),
  );
  list(
    'not indexable (left out until the file changes)',
    plan.unindexable.map((u) => `${u.path} (${u.reason})`),
  );
  // Entries that are not documents: counted and named, never left out silently.
  if (plan.skipped.length > 0) {
    lines.push(
      `Skipped in input/: ${count(plan.skipped.length, 'entry', 'entries')} (${skippedSummary(plan.skipped)})`,
    );
    lines.push(`  ${formatNameList(plan.skipped.map((s) => `${s.path} (${s.reason})`))}`);
  }
  const note = changedDeletedNote(plan.changed.length, plan.deleted.length);
  if (note) lines.push(outlook.queued.length > 0 ? `Sync (follow-up cycle): ${note}` : `Sync: ${note}`);
  if (input.cache) {
    lines.push(
      `Response cache: ${fmt(input.cache.replies)} replies, ${fmt(input.cache.embeddings)} embeddings`,
    );
  }
  return `${lines.join('\n')}\n`;
}

// ----------------------------------------------------------------------------- confirmation

export type ConfirmationDecision = 'up-to-date' | 'proceed' | 'refuse' | 'ask';

/**
 * Step 4's decision: nothing to do → up to date (no question); `--yes` → proceed; no
 * terminal on stdin or stdout → refuse (exit 2); otherwise ask.
 */
export function decideConfirmation(options: {
  hasWork: boolean;
  yes: boolean;
  interactive: boolean;
}): ConfirmationDecision {
  if (!options.hasWork) return 'up-to-date';
  if (options.yes) return 'proceed';
  if (!options.interactive) return 'refuse';
  return 'ask';
}

/** Only `y` or `yes`, in any case, proceeds (surrounding spaces ignored). */
export function isAffirmative(answer: string | null | undefined): boolean {
  return typeof answer === 'string' && /^(y|yes)$/i.test(answer.trim());
}

export type ConfirmationOutcome = { proceed: true } | { proceed: false; exitCode: number; message: string };

/** What `askQuestion` gives for a Ctrl-C (SIGINT) at the prompt. */
export const INTERRUPTED_ANSWER = Symbol('interrupted');

/**
 * Ask once on `input`/`output`; end of input counts as "no", a SIGINT while asking is
 * INTERRUPTED_ANSWER (the default action would end the process mid-line, without a word).
 */
const QUESTION_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function askQuestion(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  question: string = MESSAGES.question,
): Promise<string | null | typeof INTERRUPTED_ANSWER> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: false });
    let answered = false;
    // Ctrl-C, a `kill` or a closed terminal while the question waits: the build is cancelled
    // and returns, so its cleanup runs (a --rebuild has moved the index aside by now and
    // must put it back) instead of the process dying with the signal.
    const onSignal = () => {
      answered = true;
      rl.close();
      resolve(INTERRUPTED_ANSWER);
    };
    for (const signal of QUESTION_SIGNALS) process.once(signal, onSignal);
    rl.once('line', (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      for (const signal of QUESTION_SIGNALS) process.off(signal, onSignal);
      if (!answered) resolve(null);
    });
    output.write(question);
  });
}

/** Decide, ask when needed, and say how the command continues. */
export async function confirmBuild(options: {
  hasWork: boolean;
  yes: boolean;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}): Promise<ConfirmationOutcome> {
  const decision = decideConfirmation({
    hasWork: options.hasWork,
    yes: options.yes,
    interactive: options.input.isTTY === true && options.output.isTTY === true,
  });
  switch (decision) {
    case 'up-to-date':
      return { proceed: false, exitCode: BUILD_EXIT.OK, message: MESSAGES.upToDate };
    case 'proceed':
      return { proceed: true };
    case 'refuse':
      return { proceed: false, exitCode: BUILD_EXIT.USAGE, message: MESSAGES.refuseNoTty };
    case 'ask': {
      const answer = await askQuestion(options.input, options.output);
      if (answer === INTERRUPTED_ANSWER) {
        // The prompt's line is left open: the message starts on a line of its own.
        return { proceed: false, exitCode: BUILD_EXIT.INTERRUPTED, message: `\n${MESSAGES.cancelled}` };
      }
      if (isAffirmative(answer)) return { proceed: true };
      // End of input (Ctrl-D) leaves the prompt's line open too.
      const cancelled = answer === null ? `\n${MESSAGES.cancelled}` : MESSAGES.cancelled;
      return { proceed: false, exitCode: BUILD_EXIT.DECLINED, message: cancelled };
    }
  }
}
