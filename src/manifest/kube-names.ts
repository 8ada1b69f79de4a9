// The API server's rules for names and keys inside objects (DNS labels, qualified names, label values,
// port names, environment variable names): each returns what is wrong, or undefined when the text passes.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// The name part of a qualified name, and a label value (which may also be empty).
const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const PORT_NAME_CHARS = /^[-a-z0-9]+$/;
// Environment variable names since Kubernetes 1.32 (and every version with RelaxedEnvironmentVariableValidation):
// printable ASCII except "=". Older API servers allow only the C-identifier-like form below.
const ENV_VAR_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;
const LEGACY_ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
// RFC 7230 token characters: what an HTTP header field name may hold.
const HTTP_HEADER_NAME = /^[-A-Za-z0-9!#$%&'*+.^_`|~]+$/;

/** The longest label value and name part of a qualified name. */
export const MAX_LABEL_LENGTH = 63;
/** The longest DNS subdomain (object names, the prefix of a qualified name). */
export const MAX_SUBDOMAIN_LENGTH = 253;
/** The most bytes all annotations of one object may hold together (keys and values). */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** A DNS-1123 label: container, volume and port-less names (63 characters, lowercase, digits, "-"). */
export function dnsLabelProblem(text: string): string | undefined {
  if (text.length > MAX_LABEL_LENGTH) return `must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!DNS_LABEL.test(text))
    return 'must be a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit';
  return undefined;
}

/** A DNS-1123 subdomain: dot-separated DNS labels, 253 characters in all. */
export function dnsSubdomainProblem(text: string): string | undefined {
  if (text.length > MAX_SUBDOMAIN_LENGTH) return `must be at most ${MAX_SUBDOMAIN_LENGTH} characters`;
  if (!DNS_SUBDOMAIN.test(text))
    return 'must be a DNS subdomain: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit';
  return undefined;
}

/** A qualified name, the form of label and annotation keys: `name` or `prefix/name` (prefix a DNS subdomain). */
export function qualifiedNameProblem(text: string): string | undefined {
  const parts = text.split('/');
  if (parts.length > 2)
    return 'must be a name or prefix/name, with at most one "/" (the prefix a DNS subdomain)';
  const name = parts.at(-1) ?? '';
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') return 'must not start with "/": the prefix before "/" must not be empty';
    const problem = dnsSubdomainProblem(prefix);
    if (problem !== undefined) return `prefix ${JSON.stringify(prefix)} ${problem}`;
  }
  if (name === '') return 'must have a name (after the prefix, if any)';
  if (name.length > MAX_LABEL_LENGTH)
    return `name part ${JSON.stringify(name)} must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!QUALIFIED_NAME_PART.test(name))
    return `name part ${JSON.stringify(name)} must consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit`;
  return undefined;
}

/** A label value: empty, or up to 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit. */
export function labelValueProblem(text: string): string | undefined {
  if (text.length > MAX_LABEL_LENGTH) return `must be at most ${MAX_LABEL_LENGTH} characters`;
  if (text !== '' && !QUALIFIED_NAME_PART.test(text))
    return 'must be empty or consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit';
  return undefined;
}

/** A port name (IANA_SVC_NAME): 1–15 lowercase letters, digits and single "-", with at least one letter. */
export function portNameProblem(text: string): string | undefined {
  if (text.length === 0 || text.length > 15) return 'must be 1 to 15 characters';
  if (!PORT_NAME_CHARS.test(text)) return 'must consist of lowercase letters, digits and "-"';
  if (!/[a-z]/.test(text)) return 'must contain at least one letter';
  if (text.includes('--')) return 'must not contain "--"';
  if (text.startsWith('-') || text.endsWith('-')) return 'must not start or end with "-"';
  return undefined;
}

/** True when the number is a port the API server accepts (1–65535). */
export function isPortNumber(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** An environment variable name (or envFrom prefix): printable ASCII without "=". */
export function envVarNameProblem(text: string): string | undefined {
  if (!ENV_VAR_NAME.test(text)) return 'must consist of printable ASCII characters other than "="';
  return undefined;
}

/** True when an API server older than 1.32 would refuse the (otherwise valid) environment variable name. */
export function isNewStyleEnvVarName(text: string): boolean {
  return envVarNameProblem(text) === undefined && !LEGACY_ENV_VAR_NAME.test(text);
}

/** A key of a ConfigMap or Secret: letters, digits, "-", "_" and ".", not "." or "..". */
export function configKeyProblem(text: string): string | undefined {
  if (text.length > MAX_SUBDOMAIN_LENGTH) return `must be at most ${MAX_SUBDOMAIN_LENGTH} characters`;
  if (!CONFIG_KEY.test(text)) return 'must consist of letters, digits, "-", "_" and "."';
  if (text === '.' || text === '..' || text.startsWith('..')) return 'must not be "." or start with ".."';
  return undefined;
}

/** An HTTP header field name (a token of RFC 7230). */
export function httpHeaderNameProblem(text: string): string | undefined {
  if (!HTTP_HEADER_NAME.test(text)) return "must be an HTTP header name: letters, digits and !#$%&'*+-.^_`|~";
  return undefined;
}
