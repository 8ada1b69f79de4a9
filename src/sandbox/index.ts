// Public surface of the sandbox cluster: start one in-process, tune its faults, point clients at it.
export { startSandbox, SandboxClockError, SandboxServiceAccountError } from './start-sandbox.ts';
export type { Sandbox, SandboxOptions } from './start-sandbox.ts';
export type { WriteAudit, WriteAuditEntry } from './audit/write-audit.ts';
export type { FaultSettings } from './faults/fault-settings.ts';
export { noFaults } from './faults/fault-settings.ts';
export { ApiStatusError } from './api/api-status-error.ts';
export type { StatusBody, StatusCause } from './api/api-status-error.ts';
export { sandboxKubeConfig, sandboxKubeconfigYaml } from './sandbox-kubeconfig.ts';
