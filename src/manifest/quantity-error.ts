// The error thrown when a Kubernetes resource quantity ("500m", "128Mi") cannot be read.

/** A value that is not a Kubernetes resource quantity. */
export class QuantityError extends Error {
  override readonly name = 'QuantityError';
  readonly code = 'rollgate.spec.quantity';

  constructor(
    readonly value: unknown,
    readonly reason: string,
  ) {
    super(`invalid quantity ${JSON.stringify(value)}: ${reason}`);
  }
}
