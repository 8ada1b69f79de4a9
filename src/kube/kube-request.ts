// What one API request was, as the client metrics count it: its verb and the resource it named.

/** One request the typed clients sent and how it ended. */
export interface KubeRequestObservation {
  /** kubectl's verb: get, list, create, update, patch, delete, deletecollection, watch (or the method). */
  verb: string;
  /** The resource: `plural` for the core group, `plural.group` otherwise, `plural/subresource` for one. */
  resource: string;
  /** The HTTP status code, or `error` when no answer came (connection refused, reset, timeout). */
  code: string;
  seconds: number;
}

/** Told of every request the typed clients of one kubeconfig send. */
export type KubeRequestObserver = (observation: KubeRequestObservation) => void;

/**
 * The resource path of a request: `/api/v1/...` (core) or `/apis/GROUP/VERSION/...`, then optional
 * `namespaces/NS/`, then `PLURAL[/NAME[/SUBRESOURCE]]`. Anything else (`/version`, discovery) is named by
 * its first segments, so the label set stays small.
 */
export function describeKubeRequest(method: string, url: string): { verb: string; resource: string } {
  let path: string;
  let watch = false;
  try {
    const parsed = new URL(url);
    path = parsed.pathname;
    watch = parsed.searchParams.get('watch') === 'true' || parsed.searchParams.get('watch') === '1';
  } catch {
    path = url;
  }
  const segments = path.split('/').filter((s) => s !== '');
  let rest: string[];
  let group = '';
  if (segments[0] === 'api' && segments.length >= 2) rest = segments.slice(2);
  else if (segments[0] === 'apis' && segments.length >= 3) {
    group = segments[1]!;
    rest = segments.slice(3);
  } else return { verb: method.toLowerCase(), resource: discoveryName(segments) };
  // `namespaces/NS/PLURAL...` is namespaced; `namespaces` or `namespaces/NS` alone is the Namespace itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  if (rest.length === 0) return { verb: method.toLowerCase(), resource: 'discovery' };
  const [plural, name, subresource] = rest;
  const resource = `${plural}${group === '' ? '' : `.${group}`}${subresource === undefined ? '' : `/${subresource}`}`;
  return { verb: verbOf(method.toUpperCase(), name !== undefined, watch), resource };
}

function verbOf(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

function discoveryName(segments: string[]): string {
  if (segments.length === 0) return 'root';
  if (segments[0] === 'version' || segments[0] === 'healthz' || segments[0] === 'readyz') return segments[0];
  return 'discovery';
}
