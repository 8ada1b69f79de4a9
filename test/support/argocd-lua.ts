// Runs Argo CD resource customizations (Lua health checks and actions) under Debian's lua5.1 with lua-cjson, and
// turns their results into what Argo CD would show or send: a health status, or the merge patches Argo CD's
// server sends for an action (the status subresource first when status changed, then the rest).
//
// Where lua5.1 + cjson differ from Argo CD's gopher-lua + its JSON conversion, and what is done about it:
// - JSON null: gopher-lua sees Go nil as Lua nil; cjson decodes it to cjson.null. The driver removes nulls,
//   so `obj.status.abort == nil` behaves as in Argo CD.
// - Empty tables: Lua cannot tell [] from {}. Argo CD's encoder writes an empty table as [] and then puts
//   {} back where the live object had an object; cjson writes {}. Both are undone the same way here: an
//   empty table takes the shape the live object had at that place (for a new key, cjson's {} stays).
// - Libraries: Argo CD opens base, table, package and a safe os for scripts from argocd-cm (all of them for
//   its built-in scripts, or with useOpenLibs); `restricted` runs a script with that smaller set.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const DRIVER = join(import.meta.dirname, 'argocd-lua-driver.lua');

/** A JSON value as the scripts read and return it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Options of one run. */
export interface LuaRunOptions {
  /** Only the libraries Argo CD opens for an argocd-cm script without useOpenLibs. */
  restricted?: boolean;
}

/** Runs `script` (named `name` in errors) with `obj` as its global and returns what it returned (null for nil). */
export function runArgoCdLua(script: string, name: string, obj: Json, options: LuaRunOptions = {}): Json {
  const args = [DRIVER, script, name, ...(options.restricted ? ['restricted'] : [])];
  const run = spawnSync('lua5.1', args, { input: JSON.stringify(obj), encoding: 'utf8', timeout: 10_000 });
  if (run.error)
    throw new Error(
      `cannot run lua5.1 for ${name}: ${run.error.message} (node scripts/system-packages.js --for test installs lua5.1 and lua-cjson)`,
    );
  if (run.status !== 0) throw new Error(`${name} failed (lua5.1 exit ${run.status}): ${run.stderr.trim()}`);
  return JSON.parse(run.stdout) as Json;
}

/** Argo CD's health of a resource: status and message as its UI shows them. */
export interface ArgoCdHealth {
  status: string;
  message: string;
}

const HEALTH_CODES = new Set(['Unknown', 'Progressing', 'Healthy', 'Suspended', 'Degraded', 'Missing']);

/**
 * A health script's result as Argo CD reads it: nil means no status (''), a message left unset is '',
 * a status that is not one of Argo CD's codes is Unknown.
 */
export function argoCdHealth(
  script: string,
  name: string,
  obj: Json,
  options: LuaRunOptions = {},
): ArgoCdHealth {
  const result = runArgoCdLua(script, name, obj, options);
  if (result === null || Array.isArray(result) || typeof result !== 'object') {
    if (result === null || (Array.isArray(result) && result.length === 0)) return { status: '', message: '' };
    throw new Error(`${name} returned ${JSON.stringify(result)}, not a table`);
  }
  const status = typeof result.status === 'string' ? result.status : '';
  const message = typeof result.message === 'string' ? result.message : '';
  if (!HEALTH_CODES.has(status))
    return { status: 'Unknown', message: 'Lua returned an invalid health status' };
  return { status, message };
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An empty table takes the shape (object or array) the live object had at the same place. */
export function restoreEmptyTables(returned: Json, live: Json | undefined): Json {
  if (Array.isArray(returned)) {
    if (returned.length === 0 && isObject(live)) return {};
    return returned.map((item, i) => restoreEmptyTables(item, Array.isArray(live) ? live[i] : undefined));
  }
  if (isObject(returned)) {
    if (Object.keys(returned).length === 0 && Array.isArray(live)) return [];
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(returned))
      out[key] = restoreEmptyTables(value, isObject(live) ? live[key] : undefined);
    return out;
  }
  return returned;
}

/** Equal as JSON values: object keys in any order (cjson writes them in hash order). */
function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
    );
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

/** The RFC 7386 merge patch that turns `from` into `to` (undefined when they are equal). */
export function mergePatch(from: Json, to: Json): Json | undefined {
  if (!isObject(from) || !isObject(to)) return sameJson(from, to) ? undefined : to;
  const patch: JsonObject = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (!(key in from)) patch[key] = value;
    else {
      const inner = mergePatch(from[key] as Json, value);
      if (inner !== undefined) patch[key] = inner;
    }
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

/** What Argo CD sends for an action on one object: merge patches, status subresource first. */
export interface ArgoCdActionPatches {
  /** Sent to the status subresource when the action changed status (the whole difference, as Argo CD sends it). */
  status?: JsonObject;
  /** Sent to the object itself: the difference without status. */
  object?: JsonObject;
}

/**
 * Runs an action script on `live` and returns the patches Argo CD's server would send: the returned object
 * (old style) or the one `patch` entry for `live` (new style, a list of impacted resources), compared with
 * `live` as a merge patch, split into its status part and the rest.
 */
export function argoCdActionPatches(script: string, name: string, live: JsonObject): ArgoCdActionPatches {
  const result = runArgoCdLua(script, name, live);
  let returned: Json;
  if (Array.isArray(result)) {
    const patches = result.filter((entry) => isObject(entry) && entry.operation === 'patch');
    if (patches.length !== 1 || result.length !== 1)
      throw new Error(`${name} returned ${result.length} impacted resources; the tests handle one patch`);
    returned = (patches[0] as JsonObject).resource ?? null;
  } else returned = result;
  if (!isObject(returned)) throw new Error(`${name} returned ${JSON.stringify(result)}, not an object`);
  const diff = mergePatch(live, restoreEmptyTables(returned, live));
  if (!isObject(diff)) return {};
  const { status, ...rest } = diff;
  return {
    ...(status !== undefined ? { status: diff } : {}),
    ...(Object.keys(rest).length > 0 ? { object: rest } : {}),
  };
}
