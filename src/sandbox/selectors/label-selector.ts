// Label and field selectors as the API server parses them from ?labelSelector= and ?fieldSelector=.
import { badRequest } from '../api/api-status-error.ts';

type Requirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' };

/** A parsed selector: matches a label (or field) map. */
export interface Selector {
  matches(labels: Record<string, string | undefined>): boolean;
  /** Labels every match carries (its `key=value` terms): what a store list can look up by index. */
  readonly equalities?: Readonly<Record<string, string>>;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseTerm(term: string, setBased: boolean): Requirement {
  const setMatch = /^([^\s!=()]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (setMatch && setBased) {
    const values = (setMatch[3] ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return { key: setMatch[1] ?? '', op: setMatch[2] === 'in' ? 'in' : 'notin', values };
  }
  const eqMatch = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(term);
  if (eqMatch) {
    return { key: eqMatch[1] ?? '', op: eqMatch[2] === '!=' ? 'neq' : 'eq', value: eqMatch[3] ?? '' };
  }
  if (setBased) {
    const notExists = /^!\s*([^\s!=()]+)$/.exec(term);
    if (notExists) return { key: notExists[1] ?? '', op: 'notexists' };
    if (/^[^\s!=()]+$/.test(term)) return { key: term, op: 'exists' };
  }
  throw badRequest(`unable to parse requirement: found '${term}', expected: ',' or 'end of string'`);
}

function matchOne(req: Requirement, labels: Record<string, string | undefined>): boolean {
  const value = labels[req.key];
  switch (req.op) {
    case 'eq':
      return value === req.value;
    case 'neq':
      return value !== req.value;
    case 'in':
      return value !== undefined && req.values.includes(value);
    case 'notin':
      return value === undefined || !req.values.includes(value);
    case 'exists':
      return value !== undefined;
    case 'notexists':
      return value === undefined;
  }
}

function build(text: string | null | undefined, setBased: boolean): Selector {
  const requirements = text ? splitTerms(text).map((t) => parseTerm(t, setBased)) : [];
  const equalities: Record<string, string> = {};
  for (const r of requirements) if (r.op === 'eq') equalities[r.key] = r.value;
  return { matches: (labels) => requirements.every((r) => matchOne(r, labels)), equalities };
}

/** Parses `app=web,tier in (a,b),!canary` (equality and set-based). Throws 400 BadRequest on bad syntax. */
export function parseLabelSelector(text: string | null | undefined): Selector {
  return build(text, true);
}

/** Parses `metadata.name=x,metadata.namespace!=y` (equality only, as the real server). */
export function parseFieldSelector(text: string | null | undefined): Selector {
  return build(text, false);
}

/** The field values a field selector can test: metadata.name/namespace plus any scalar at a dotted path. */
export function fieldsOf(obj: Record<string, unknown>, paths: string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const path of paths) {
    let cur: unknown = obj;
    for (const part of path.split('.')) {
      cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[part] : undefined;
    }
    out[path] =
      cur === undefined || cur === null ? (path === 'metadata.namespace' ? '' : undefined) : String(cur);
  }
  return out;
}

/** The keys a field selector string refers to (so only those are extracted). */
export function fieldSelectorKeys(text: string | null | undefined): string[] {
  if (!text) return [];
  return splitTerms(text).map((t) => (/^([^\s!=]+)/.exec(t)?.[1] ?? '').trim());
}

/** A `matchLabels` + `matchExpressions` LabelSelector object (as in a ReplicaSet spec) as a Selector. */
export function selectorFromObject(selector: unknown): Selector {
  const s = (selector ?? {}) as {
    matchLabels?: Record<string, string>;
    matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  };
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(s.matchLabels ?? {})) reqs.push({ key, op: 'eq', value });
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'In') reqs.push({ key: e.key, op: 'in', values: e.values ?? [] });
    else if (e.operator === 'NotIn') reqs.push({ key: e.key, op: 'notin', values: e.values ?? [] });
    else if (e.operator === 'Exists') reqs.push({ key: e.key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') reqs.push({ key: e.key, op: 'notexists' });
  }
  return { matches: (labels) => reqs.every((r) => matchOne(r, labels)) };
}
