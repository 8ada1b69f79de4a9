// The revert planner: an aborted revision, the commit that introduced it and the source branch's tip → what to write back.
import { parseAllDocuments } from 'yaml';
import { ImageRewriteError } from '../promotion/image-rewrite-error.ts';
import { normalizeRepoPath, planImageEdits } from '../promotion/plan-image-edits.ts';
import { findWorkloads, workloadImages } from '../promotion/workload-images.ts';
import { parseYamlSource, type PromotionFile } from '../promotion/yaml-source.ts';
import type { RestoredObject, RevertAction, RevertFile, RevertMode, RevertPlan } from './revert-action.ts';

/** One file the commit changed (repository-relative), before and after; undefined: absent on that side. */
export interface CommitFileChange {
  path: string;
  before?: string;
  after?: string;
}

export interface RevertPlanInput {
  source: { name: string; path: string; namespace?: string };
  rollout: {
    namespace: string;
    name: string;
    /** The revision (pod-template hash) that aborted. */
    revision: string;
    aborted: boolean;
    abortMessage?: string;
    /** The commit the Rollout was applied from (annotation `rollgate.dev/commit`). */
    commit?: string;
    /** What the Rollout already records (`rollgate.dev/revert-revision`): a pull request was opened for it. */
    recordedRevision?: string;
  };
  /** The commit that introduced the revision, as read by the edge: its parent and the files it changed. */
  commit?: { sha: string; parent: string; subject: string; changes: CommitFileChange[] };
  /** The source branch's tip and every manifest file under the source's path there. */
  tip?: { sha: string; files: PromotionFile[] };
  /** The open pull request of the revert branch, found through the forge (so a restart finds it). */
  pullRequest?: { number: number; url: string };
}

/** Rollgate's branch for the revert of one aborted revision: one branch, at most one pull request. */
export function revertBranch(source: string, rollout: { namespace: string; name: string }, revision: string) {
  return `rollgate/revert/${source}/${rollout.namespace}/${rollout.name}/${revision}`;
}

const RESTORED_KINDS = new Set(['ConfigMap', 'Secret']);

type Manifest = Record<string, unknown> & { metadata?: { name?: unknown; namespace?: unknown } };

/** The ConfigMaps and Secrets a YAML text declares, by `namespace/name` (unreadable documents are skipped). */
function configObjects(text: string | undefined, defaultNamespace: string): Map<string, Manifest> {
  const found = new Map<string, Manifest>();
  if (text === undefined) return found;
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) continue;
    const value = document.toJS() as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const object = value as Manifest;
    if (object.apiVersion !== 'v1' || typeof object.kind !== 'string' || !RESTORED_KINDS.has(object.kind))
      continue;
    const name = object.metadata?.name;
    if (typeof name !== 'string') continue;
    const namespace =
      typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : defaultNamespace;
    found.set(`${object.kind}/${namespace}/${name}`, {
      ...object,
      metadata: { ...object.metadata, namespace },
    });
  }
  return found;
}

/** Stable JSON (sorted keys), so two declarations compare by content, not by key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function inPath(path: string, sourcePath: string): boolean {
  const root = normalizeRepoPath(sourcePath);
  const file = normalizeRepoPath(path);
  return root === '' || file === root || file.startsWith(`${root}/`);
}

/**
 * The ConfigMaps and Secrets of the source that the commit changed, as the parent declared them. One the
 * commit added has no previous content and is left as it is (the previous pods do not read it); one it
 * removed is applied again.
 */
export function restoredObjects(input: Pick<RevertPlanInput, 'source' | 'commit'>): RestoredObject[] {
  const namespace = input.source.namespace ?? 'default';
  const restored: RestoredObject[] = [];
  for (const change of input.commit?.changes ?? []) {
    if (!inPath(change.path, input.source.path)) continue;
    const before = configObjects(change.before, namespace);
    const after = configObjects(change.after, namespace);
    for (const [key, previous] of before) {
      const next = after.get(key);
      if (next !== undefined && canonical(next) === canonical(previous)) continue;
      const [kind, objectNamespace, name] = key.split('/') as ['ConfigMap' | 'Secret', string, string];
      restored.push({ kind, namespace: objectNamespace, name, manifest: previous, file: change.path });
    }
  }
  return restored.sort((a, b) =>
    `${a.kind}/${a.namespace}/${a.name}`.localeCompare(`${b.kind}/${b.namespace}/${b.name}`),
  );
}

/** The Rollout's images in the given files (by container), or undefined when it is not there. */
function rolloutImages(
  files: readonly PromotionFile[],
  target: { name: string },
): Map<string, string> | undefined {
  for (const file of files) {
    let source;
    try {
      source = parseYamlSource(file);
    } catch {
      continue;
    }
    const [workload] = findWorkloads(source, { kind: 'Rollout', name: target.name });
    if (workload !== undefined) return workloadImages(workload);
  }
  return undefined;
}

/** The branch's files for a true revert: each changed file back to its parent text, or undefined when it cannot be. */
function trueRevert(input: RevertPlanInput): RevertFile[] | undefined {
  const { commit, tip } = input;
  if (commit === undefined || tip === undefined) return undefined;
  if (!commit.changes.every((change) => inPath(change.path, input.source.path))) return undefined;
  const atTip = new Map(tip.files.map((file) => [normalizeRepoPath(file.path), file.text]));
  // A later commit changed one of its files: undoing the whole commit would undo that too.
  if (!commit.changes.every((change) => atTip.get(normalizeRepoPath(change.path)) === change.after))
    return undefined;
  return commit.changes.map((change) => ({ path: change.path, text: change.before ?? null }));
}

function pullRequestText(
  input: RevertPlanInput,
  mode: RevertMode,
  files: readonly RevertFile[],
  restored: readonly RestoredObject[],
): { title: string; body: string; message: string } {
  const { rollout, commit, source } = input;
  const short = commit?.sha.slice(0, 7) ?? 'unknown';
  const title = `Revert ${rollout.name} revision ${rollout.revision} (aborted in ${source.name})`;
  const how =
    mode === 'revert'
      ? `This reverts commit ${commit?.sha ?? ''} ("${commit?.subject ?? ''}"), which changed only files of \`${source.name}\`.`
      : `Commit ${commit?.sha ?? ''} ("${commit?.subject ?? ''}") changed more than \`${source.name}\`'s Rollout (or later commits changed its files), so this sets only the Rollout's images back to those of its parent commit.`;
  const body = [
    `Revision \`${rollout.revision}\` of Rollout \`${rollout.namespace}/${rollout.name}\` aborted in \`${source.name}\`${rollout.abortMessage ? `: ${rollout.abortMessage}` : '.'}`,
    '',
    how,
    '',
    'Files:',
    ...files.map((file) => `- \`${file.path}\`${file.text === null ? ' (removed)' : ''}`),
    ...(restored.length > 0
      ? [
          '',
          'Restored in the cluster with the pods while the revision stays aborted (merging makes Git say the same):',
          ...restored.map((object) => `- ${object.kind} \`${object.namespace}/${object.name}\``),
        ]
      : []),
    '',
    'Rollgate never merges this pull request by itself.',
    `<!-- rollgate:revert ${JSON.stringify({ source: source.name, rollout: `${rollout.namespace}/${rollout.name}`, revision: rollout.revision, commit: commit?.sha })} -->`,
  ].join('\n');
  return { title, body, message: `${title}\n\nReverts ${short} in ${source.name}.` };
}

/**
 * Plans one look at an aborted revision. The ConfigMaps and Secrets its commit changed are restored
 * at once (the pods went back; their configuration goes back with them). Then a branch and one pull
 * request undo the commit: as a whole when it changed only this source's files and nothing changed them
 * since, else by setting the Rollout's previous images. A revision that already had its pull request
 * (recorded on the Rollout) never gets a second one, also when that one was closed unmerged.
 */
export function planRevert(input: RevertPlanInput): RevertPlan {
  const { rollout, source } = input;
  const key = `${rollout.namespace}/${rollout.name}`;
  if (!rollout.aborted)
    return { state: 'not-aborted', actions: [], restored: [], summary: `${key}: not aborted` };
  if (rollout.commit === undefined || input.commit === undefined || input.commit.sha !== rollout.commit)
    return {
      state: 'unknown-commit',
      actions: [],
      restored: [],
      summary: `${key}: revision ${rollout.revision} aborted, but the commit that introduced it is not known`,
    };
  const restored = restoredObjects(input);
  const restore: RevertAction[] = restored.map((object) => ({ kind: 'restoreObject', object }));
  const branch = revertBranch(source.name, rollout, rollout.revision);
  const base = { restored, branch };
  if (input.pullRequest !== undefined)
    return {
      ...base,
      state: 'open',
      actions: [
        ...restore,
        ...(rollout.recordedRevision === rollout.revision
          ? []
          : [{ kind: 'recordPullRequest', revision: rollout.revision } as const]),
      ],
      summary: `${key}: revert of ${rollout.revision} is open as #${input.pullRequest.number}`,
    };
  if (rollout.recordedRevision === rollout.revision)
    return {
      ...base,
      state: 'closed',
      actions: restore,
      summary: `${key}: the revert pull request of ${rollout.revision} was closed; none is opened again`,
    };
  const tip = input.tip;
  if (tip === undefined)
    return {
      ...base,
      state: 'unknown-commit',
      actions: restore,
      summary: `${key}: the source branch was not read`,
    };

  let mode: RevertMode = 'revert';
  let files = trueRevert(input);
  if (files === undefined) {
    mode = 'restore-rollout';
    const previous = rolloutImages(
      input.commit.changes.flatMap((change) =>
        change.before === undefined ? [] : [{ path: change.path, text: change.before }],
      ),
      rollout,
    );
    if (previous === undefined)
      return {
        ...base,
        state: 'refused',
        mode,
        actions: restore,
        summary: `${key}: the parent commit has no Rollout ${rollout.name} in the files the commit changed; no revert proposed`,
      };
    try {
      const edits = planImageEdits(
        tip.files,
        { kind: 'Rollout', name: rollout.name },
        [...previous].map(([container, image]) => ({ container, image })),
        { path: source.path },
      );
      files = edits.files.map((file) => ({ path: file.path, text: file.text }));
    } catch (error) {
      // The same files give the same answer: reported, and looked at again when Git changes.
      if (!(error instanceof ImageRewriteError)) throw error;
      return { ...base, state: 'refused', mode, actions: restore, summary: `${key}: ${error.message}` };
    }
  }
  const atTip = new Map(tip.files.map((file) => [normalizeRepoPath(file.path), file.text]));
  const changing = files.filter((file) => (atTip.get(normalizeRepoPath(file.path)) ?? null) !== file.text);
  if (changing.length === 0)
    return {
      ...base,
      state: 'in-git',
      mode,
      actions: restore,
      summary: `${key}: ${source.name}'s branch no longer declares revision ${rollout.revision}`,
    };
  const text = pullRequestText(input, mode, changing, restored);
  return {
    ...base,
    state: 'opening',
    mode,
    actions: [
      ...restore,
      { kind: 'pushBranch', branch, files: changing, message: text.message },
      { kind: 'openPullRequest', head: branch, title: text.title, body: text.body },
      { kind: 'recordPullRequest', revision: rollout.revision },
    ],
    summary: `${key}: revision ${rollout.revision} aborted; opening a ${mode === 'revert' ? 'revert' : 'restore'} pull request`,
  };
}
