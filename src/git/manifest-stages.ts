// Splits a commit's changed manifest files into a first part (its Rollouts and what they may need) and the rest.
import { parseFileChange, type ParsedFileChange } from './manifest-diff.ts';
import type { ManifestParser, SourceManifest } from './manifest-parser.ts';

/** A changed file's two versions as text (absent: the file is not there on that side). */
export interface FileTexts {
  path: string;
  before?: string;
  after?: string;
  /**
   * The new version could not be read as manifests at all (an app whose render failed, a Helm chart):
   * these problems and no objects, so the objects the old version defined are held, never pruned.
   */
  problems?: Array<{ file: string; line: number; message: string }>;
}

/** An object a parsed one may have to follow: any object named `name`, of `kind` when given. */
export interface ManifestNeed {
  name: string;
  kind?: string;
}

/** What decides the first part: the kinds it starts from, and what an object of it may have to follow. */
export interface FirstPartRule {
  /** Objects of these kinds, and what they need (directly or not), are in the first part. */
  kinds: readonly string[];
  /** The objects a new version of `object` may have to follow in the cluster. */
  needsOf: (object: SourceManifest) => Iterable<ManifestNeed>;
}

/** The first part, parsed, and the files left for later (as text). */
export interface SplitFiles {
  first: ParsedFileChange[];
  rest: FileTexts[];
}

/**
 * Past this share of the files in the first part, splitting saves little and the text search costs
 * more than it saves: every file goes in the first part.
 */
const MOST_FILES = 0.5;

/** Characters a Kubernetes name or kind can hold: a match must not have one on either side. */
const NAME_CHAR = /[A-Za-z0-9._-]/;
const NAME_RUNS = /[A-Za-z0-9._-]+/g;

/** Whether `token` occurs in `text` as a whole word (not inside a longer name). */
export function hasToken(text: string, token: string): boolean {
  if (token === '') return false;
  for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + 1)) {
    const before = at === 0 ? '' : (text[at - 1] as string);
    const after = text[at + token.length] ?? '';
    if (!NAME_CHAR.test(before) && !NAME_CHAR.test(after)) return true;
  }
  return false;
}

/**
 * Which files hold which words (runs of name characters), so that finding the files that may define a
 * name costs a lookup rather than a scan of every file: a name found as a whole word in a text has each
 * of its words among the text's words. Files with a backslash match every search (see {@link mayDefine}).
 */
class WordIndex {
  private readonly files = new Map<string, number[]>();
  readonly escaped: number[] = [];

  constructor(private readonly texts: ReadonlyArray<readonly string[]>) {
    texts.forEach((versions, index) => {
      const words = new Set<string>();
      for (const text of versions) {
        if (text.includes('\\')) this.escaped.push(index);
        for (const word of text.match(NAME_RUNS) ?? []) words.add(word);
      }
      for (const word of words) {
        const list = this.files.get(word);
        if (list) list.push(index);
        else this.files.set(word, [index]);
      }
    });
  }

  /** Files that may define an object matching `need` (see {@link mayDefine}). */
  find(need: ManifestNeed): number[] {
    const found = new Set<number>(this.escaped);
    for (const index of this.withWords(need.name)) {
      const versions = this.texts[index] as readonly string[];
      if (versions.some((text) => mayDefine(text, need))) found.add(index);
    }
    return [...found];
  }

  /** Files holding every word of `name` (the one with the fewest files is the shortlist). */
  private withWords(name: string): number[] {
    const words = name.match(NAME_RUNS) ?? [];
    if (words.length === 0) return this.texts.map((_, index) => index);
    let shortest: number[] | undefined;
    for (const word of words) {
      const list = this.files.get(word) ?? [];
      if (shortest === undefined || list.length < shortest.length) shortest = list;
    }
    return shortest ?? [];
  }
}

/**
 * Whether the text may define an object matching `need`, as a YAML parser would read it. Sound because
 * a name a YAML document gives is in its text as written unless it is escaped (a backslash in the
 * file) or folded over lines (which puts a space in it, and no Kubernetes name holds one); aliases and
 * merge keys repeat text from the same file.
 */
function mayDefine(text: string, need: ManifestNeed): boolean {
  if (text.includes('\\')) return true;
  return hasToken(text, need.name) && (need.kind === undefined || hasToken(text, need.kind));
}

/**
 * Splits changed files so that the first part holds every file that may define an object of
 * `rule.kinds`, and, repeatedly, every file that may define an object an object of the first part needs
 * or an object with the same name as one in it (so that a key defined twice, or moved from one file to
 * another, is compared within one part). Decided on the text, a superset by construction (see
 * {@link mayDefine}); only the first part is parsed here. Keys defined in the rest are never defined in
 * the first part, so each part can be compared on its own ({@link compareManifests}).
 *
 * When that would be most of the files, or there is no object of `rule.kinds`, everything is the first
 * part or the rest respectively: nothing is gained by a split.
 */
export function splitFirstPart(
  files: readonly FileTexts[],
  parser: ManifestParser,
  rule: FirstPartRule,
): SplitFiles {
  const index = new WordIndex(
    files.map((file) => [file.before, file.after].filter((t): t is string => t !== undefined)),
  );
  const chosen = new Set<number>();
  const parsed = new Map<number, ParsedFileChange>();
  const pending: ManifestNeed[] = [];
  const asked = new Set<string>();
  const ask = (need: ManifestNeed): void => {
    const id = `${need.kind ?? ''}/${need.name}`;
    if (asked.has(id)) return;
    asked.add(id);
    pending.push(need);
  };
  const choose = (at: number): void => {
    if (chosen.has(at)) return;
    chosen.add(at);
    const entry = parseFileChange(files[at] as FileTexts, parser);
    parsed.set(at, entry);
    for (const object of entry.before?.objects ?? []) if (object.name) ask({ name: object.name });
    for (const object of entry.after?.objects ?? []) {
      if (object.name) ask({ name: object.name });
      for (const need of rule.needsOf(object)) ask(need);
    }
    // A document that is not valid keeps the key it was read with: the same key elsewhere is compared here.
    for (const problem of entry.after?.problems ?? []) {
      const name = problem.key?.split('/').slice(2).join('/');
      if (name) ask({ name });
    }
  };

  for (const kind of rule.kinds) for (const at of index.find({ name: kind })) choose(at);
  const limit = Math.max(1, Math.floor(files.length * MOST_FILES));
  while (pending.length > 0 && chosen.size <= limit) {
    for (const at of index.find(pending.pop() as ManifestNeed)) choose(at);
  }
  if (chosen.size > limit) files.forEach((_, at) => choose(at));
  const first: ParsedFileChange[] = [];
  const rest: FileTexts[] = [];
  files.forEach((file, at) => {
    const entry = parsed.get(at);
    if (entry) first.push(entry);
    else rest.push(file);
  });
  return { first, rest };
}

/**
 * Parses files one after the other, giving the event loop a turn now and then: the first part's writes
 * (and the reconcile they start) go on while thousands of files are parsed.
 */
export async function parseFiles(
  files: FileTexts[],
  parser: ManifestParser,
  filesPerTurn = 25,
): Promise<ParsedFileChange[]> {
  const out: ParsedFileChange[] = [];
  for (let i = 0; i < files.length; i++) {
    if (i > 0 && i % filesPerTurn === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const file = files[i] as FileTexts;
    const entry = parseFileChange(file, parser);
    // The text is not needed once parsed (a commit of thousands of files holds each only until then).
    files[i] = { path: file.path };
    out.push(entry);
  }
  return out;
}
