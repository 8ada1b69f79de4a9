// The error a dashboard request is refused with: an HTTP status and a stable code the page and scripts compare.

export type DashboardErrorCode =
  | 'dashboard.unauthorized'
  | 'dashboard.host_not_allowed'
  | 'dashboard.cross_origin'
  | 'dashboard.actions_disabled'
  | 'dashboard.not_found'
  | 'dashboard.method_not_allowed'
  | 'dashboard.unknown_verb'
  | 'dashboard.unknown_group'
  | 'dashboard.unknown_cluster'
  | 'dashboard.csrf'
  | 'dashboard.forbidden';

export class DashboardRequestError extends Error {
  override readonly name = 'DashboardRequestError';
  constructor(
    readonly status: number,
    readonly code: DashboardErrorCode,
    message: string,
  ) {
    super(message);
  }
}
