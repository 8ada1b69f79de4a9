// The API server's name rules as validation applies them: what passes, and why the rest does not.
import { describe, it, expect } from 'vitest';
import {
  dnsLabelProblem,
  envVarNameProblem,
  isNewStyleEnvVarName,
  labelValueProblem,
  portNameProblem,
  qualifiedNameProblem,
} from '../../../src/manifest/kube-names.ts';

describe('kube names', () => {
  it('DNS labels: lowercase, digits and inner "-", 63 characters at most', () => {
    for (const ok of ['web', 'a', '0abc', 'log-shipper', 'a'.repeat(63)])
      expect(dnsLabelProblem(ok)).toBeUndefined();
    for (const bad of ['Web', '-web', 'web-', 'web.d', 'web_1', '', 'a'.repeat(64)])
      expect(dnsLabelProblem(bad)).toBeDefined();
  });

  it('qualified names: name or DNS-subdomain/name, the name 63 characters of letters, digits, "-", "_", "."', () => {
    for (const ok of ['app', 'App_Name.v1', 'app.kubernetes.io/name', 'example.com/A-b'])
      expect(qualifiedNameProblem(ok)).toBeUndefined();
    expect(qualifiedNameProblem('a/b/c')).toMatch(/at most one "\/"/);
    expect(qualifiedNameProblem('/name')).toMatch(/prefix before "\/" must not be empty/);
    expect(qualifiedNameProblem('Example.com/name')).toMatch(/^prefix "Example.com" must be a DNS subdomain/);
    expect(qualifiedNameProblem('example.com/')).toMatch(/must have a name/);
    expect(qualifiedNameProblem('-app')).toMatch(/^name part "-app"/);
    expect(qualifiedNameProblem('x'.repeat(64))).toMatch(/at most 63 characters/);
  });

  it('label values: empty, or 63 characters of the name alphabet', () => {
    for (const ok of ['', 'v1.4.2', 'A_b-c', '1'.repeat(63)]) expect(labelValueProblem(ok)).toBeUndefined();
    for (const bad of ['a b', 'a/b', '-a', 'a.', '1'.repeat(64)])
      expect(labelValueProblem(bad)).toBeDefined();
  });

  it('port names (IANA_SVC_NAME): 15 characters, lowercase, a letter, no "--", no "-" at either end', () => {
    for (const ok of ['http', 'http-2', 'h2c', 'a1']) expect(portNameProblem(ok)).toBeUndefined();
    expect(portNameProblem('prometheus-metrics')).toBe('must be 1 to 15 characters');
    expect(portNameProblem('HTTP')).toBe('must consist of lowercase letters, digits and "-"');
    expect(portNameProblem('8080')).toBe('must contain at least one letter');
    expect(portNameProblem('http--alt')).toBe('must not contain "--"');
    expect(portNameProblem('-http')).toBe('must not start or end with "-"');
  });

  it('environment variable names: printable ASCII without "="; the older, narrower form is told apart', () => {
    for (const ok of ['PATH', 'my.var-1', '1ST', 'WITH SPACE']) expect(envVarNameProblem(ok)).toBeUndefined();
    for (const bad of ['A=B', '', 'tab\there', 'é']) expect(envVarNameProblem(bad)).toBeDefined();
    expect(isNewStyleEnvVarName('my.var-1')).toBe(false);
    expect(isNewStyleEnvVarName('1ST')).toBe(true);
    expect(isNewStyleEnvVarName('WITH SPACE')).toBe(true);
  });
});
