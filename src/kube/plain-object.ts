// The JSON form of what a client returns, apart from client-node so its plain-JSON readers need not load it.

/** The JSON form of a typed client-node model (Dates become RFC 3339 strings), for comparing and planning. */
export function toPlainObject<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
