// Structural-schema pruning, defaulting and validation of custom resources, as kube-apiserver does them.
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../../src/sandbox/api/api-status-error.ts';
import type { ResourceType } from '../../../src/sandbox/resources/resource-type.ts';
import type { StoredObject } from '../../../src/sandbox/store/object-store.ts';
import { applySchemaDefaults } from '../../../src/sandbox/validation/crd-defaulting.ts';
import { pruneNonNullableNulls, pruneUnknownFields } from '../../../src/sandbox/validation/crd-pruning.ts';
import {
  compileCrdSchema,
  compilePattern,
  CrdSchemaError,
} from '../../../src/sandbox/validation/crd-schema.ts';
import { validateAgainstSchema } from '../../../src/sandbox/validation/crd-validation.ts';
import { admitCustomResource } from '../../../src/sandbox/validation/custom-resource-admission.ts';
import { goFieldValue, goFloat } from '../../../src/sandbox/validation/go-value-format.ts';

const schema = compileCrdSchema({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 5, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', minimum: 0, exclusiveMaximum: true, maximum: 10 },
        ratio: { type: 'number', multipleOf: 0.5 },
        maxSurge: { 'x-kubernetes-int-or-string': true },
        mode: { type: 'string', enum: ['Fast', 'Slow'], default: 'Fast' },
        level: { type: 'integer', enum: [1, 2] },
        paused: { type: 'boolean', default: false },
        note: { type: 'string', nullable: true },
        address: { type: 'string', format: 'ipv4' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { n: { type: 'integer' } },
        },
        empty: { type: 'object' },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { data: { type: 'string' } },
        },
        tags: { type: 'array', maxItems: 2, 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          minItems: 1,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port'],
          items: {
            type: 'object',
            properties: {
              port: { type: 'integer' },
              protocol: { type: 'string', default: 'TCP' },
              match: {
                type: 'object',
                default: {},
                properties: { type: { type: 'string', default: 'Prefix' } },
              },
            },
          },
        },
        uri: {
          type: 'object',
          properties: { exact: { type: 'string' }, prefix: { type: 'string' } },
          oneOf: [
            { not: { anyOf: [{ required: ['exact'] }, { required: ['prefix'] }] } },
            { required: ['exact'] },
            { required: ['prefix'] },
          ],
        },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string', enum: ['Ready'] } } },
  },
});
const specSchema = schema.properties?.get('spec');
if (!specSchema) throw new Error('no spec schema');

const validate = (spec: Record<string, unknown>) =>
  validateAgainstSchema({ spec: { name: 'a', ...spec } }, schema);

describe('Go value formatting', () => {
  it('prints floats as Go %v does and values as field errors do', () => {
    expect(goFloat(1_000_000)).toBe('1e+06');
    expect(goFloat(1_234_567)).toBe('1.234567e+06');
    expect(goFloat(65535)).toBe('65535');
    expect(goFloat(0.5)).toBe('0.5');
    expect(goFloat(0.000015)).toBe('1.5e-05');
    expect(goFieldValue('x')).toBe('"x"');
    expect(goFieldValue(null)).toBe('null');
    expect(goFieldValue({ b: 1, a: 'x' })).toBe('map[string]interface {}{"a":"x", "b":1}');
  });
});

describe('pruning', () => {
  it('drops undeclared fields and reports their paths, keeping root meta, maps, preserved and embedded fields', () => {
    const obj = {
      apiVersion: 'x/v1',
      kind: 'K',
      metadata: { name: 'a', anything: 1 },
      top: 1,
      spec: {
        name: 'a',
        extra: true,
        labels: { a: 'b' },
        free: { n: 1, other: { deep: true } },
        empty: { gone: 1 },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, data: 'd', junk: 1 },
        ports: [{ port: 80, junk: 'x' }],
      },
    };
    expect(pruneUnknownFields(obj, schema)).toEqual([
      'top',
      'spec.extra',
      'spec.empty.gone',
      'spec.template.junk',
      'spec.ports[0].junk',
    ]);
    expect(obj.spec).toEqual({
      name: 'a',
      labels: { a: 'b' },
      free: { n: 1, other: { deep: true } },
      empty: {},
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, data: 'd' },
      ports: [{ port: 80 }],
    });
    expect(obj.metadata).toEqual({ name: 'a', anything: 1 });
  });

  it('drops nulls of fields that are neither nullable nor defaulted, keeps the others for defaulting', () => {
    const spec: Record<string, unknown> = { name: null, note: null, mode: null, tags: [null] };
    pruneNonNullableNulls(spec, specSchema);
    expect(spec).toEqual({ note: null, mode: null, tags: [null] });
    applySchemaDefaults(spec, specSchema);
    expect(spec).toEqual({ note: null, mode: 'Fast', paused: false, tags: [null] });
  });
});

describe('defaulting', () => {
  it('fills absent fields, including inside defaulted objects and list items', () => {
    const spec: Record<string, unknown> = {
      name: 'a',
      paused: true,
      ports: [{ port: 80 }, { port: 81, protocol: 'UDP' }],
    };
    applySchemaDefaults(spec, specSchema);
    expect(spec).toEqual({
      name: 'a',
      mode: 'Fast',
      paused: true,
      ports: [
        { port: 80, protocol: 'TCP', match: { type: 'Prefix' } },
        { port: 81, protocol: 'UDP', match: { type: 'Prefix' } },
      ],
    });
  });
});

describe('validation', () => {
  it('accepts a valid object', () => {
    expect(
      validate({
        replicas: 9,
        ratio: 1.5,
        maxSurge: '25%',
        level: 2,
        note: null,
        address: '10.0.0.1',
        ports: [{ port: 1 }],
      }),
    ).toEqual([]);
    expect(validate({ maxSurge: 3 })).toEqual([]);
  });

  it('words type errors as kube-openapi does, int-or-string and nulls included', () => {
    expect(validate({ replicas: '3', maxSurge: true, paused: 'yes', tags: [null] })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        field: 'spec.replicas',
      },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "boolean": spec.maxSurge in body must be of type integer,string: "boolean"',
        field: 'spec.maxSurge',
      },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": spec.paused in body must be of type boolean: "string"',
        field: 'spec.paused',
      },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "null": spec.tags[0] in body must be of type string: "null"',
        field: 'spec.tags[0]',
      },
    ]);
    expect(validate({ replicas: 1.5 })[0]?.message).toBe(
      'Invalid value: "number": spec.replicas in body must be of type integer: "number"',
    );
  });

  it('checks bounds, lengths, patterns, enums, formats, list sizes and list uniqueness', () => {
    const causes = validateAgainstSchema(
      {
        spec: {
          name: 'ABCDEF',
          replicas: 10,
          ratio: 0.3,
          level: 3,
          mode: 'Medium',
          address: '300.1.1.1',
          tags: ['a', 'a', 'b'],
          ports: [],
        },
      },
      schema,
    ).map((c) => `${c.field}: ${c.message}`);
    expect(causes).toEqual([
      'spec.name: Too long: may not be more than 5 bytes',
      'spec.name: Invalid value: "ABCDEF": spec.name in body should match \'^[a-z]+$\'',
      'spec.replicas: Invalid value: 10: spec.replicas in body should be less than 10',
      'spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.5',
      'spec.level: Unsupported value: 3: supported values: "1", "2"',
      'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"',
      'spec.address: Invalid value: "300.1.1.1": spec.address in body must be of type ipv4: "300.1.1.1"',
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.tags[1]: Duplicate value: "a"',
      'spec.ports: Invalid value: 0: spec.ports in body should have at least 1 items',
    ]);
    expect(validate({ name: '', replicas: -1 }).map((c) => c.message)).toEqual([
      'Invalid value: "": spec.name in body should be at least 1 chars long',
      'Invalid value: "": spec.name in body should match \'^[a-z]+$\'',
      'Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    ]);
    expect(validate({ ports: [{ port: 80 }, { port: 80 }] })).toEqual([
      {
        reason: 'FieldValueDuplicate',
        message: 'Duplicate value: map[string]interface {}{"port":80}',
        field: 'spec.ports[1]',
      },
    ]);
  });

  it('reports required fields and oneOf with the nil path kube-apiserver prints', () => {
    expect(validateAgainstSchema({ spec: {} }, schema)).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.name' },
    ]);
    expect(validate({ uri: { exact: '/a', prefix: '/' } })).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "": "spec.uri" must validate one and only one schema (oneOf). Found 2 valid alternatives',
        field: '<nil>',
      },
    ]);
    expect(validate({ uri: { prefix: '/' } })).toEqual([]);
  });

  it('words anyOf, allOf and not failures as kube-openapi does', () => {
    const node = compileCrdSchema({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      anyOf: [{ required: ['a'] }, { required: ['b'] }],
      allOf: [{ properties: { a: { maximum: 5 } } }],
      not: { required: ['c'] },
    });
    expect(validateAgainstSchema({ c: 1 }, node, 'x').map((c) => `${c.field}: ${c.message}`)).toEqual([
      '<nil>: Invalid value: "": "x" must validate at least one schema (anyOf)',
      'x.a: Required value',
      '<nil>: Invalid value: "": "x" must not validate the schema (not)',
    ]);
    expect(validateAgainstSchema({ a: 9 }, node, 'x').map((c) => `${c.field}: ${c.message}`)).toEqual([
      'x.a: Invalid value: 9: x.a in body should be less than or equal to 5',
      '<nil>: Invalid value: "": "x" must validate all the schemas (allOf). None validated',
    ]);
  });
});

describe('admission', () => {
  const type = {
    group: 'x.dev',
    version: 'v1',
    kind: 'Thing',
    plural: 'things',
    statusSubresource: true,
  } as ResourceType;
  const thing = (spec: Record<string, unknown>, status?: unknown): StoredObject =>
    ({
      apiVersion: 'x.dev/v1',
      kind: 'Thing',
      metadata: { name: 't' },
      spec,
      ...(status ? { status } : {}),
    }) as never;

  it('prunes, defaults and validates a main-resource write, leaving status to the store', () => {
    const obj = thing({ name: 'a', junk: 1 }, { phase: 'Whatever', junk: 2 });
    expect(admitCustomResource(type, schema, obj, { fieldValidation: 'Warn' })).toEqual([
      'unknown field "spec.junk"',
    ]);
    expect(obj.spec).toEqual({ name: 'a', mode: 'Fast', paused: false });
    expect(obj.status).toEqual({ phase: 'Whatever', junk: 2 });
  });

  it('checks only status on a /status write', () => {
    const obj = thing({ name: 'INVALID!' }, { phase: 'Done' });
    const err = (() => {
      try {
        admitCustomResource(type, schema, obj, { fieldValidation: 'Ignore', subresource: 'status' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ApiStatusError);
    expect((err as ApiStatusError).status.message).toBe(
      'Thing.x.dev "t" is invalid: status.phase: Unsupported value: "Done": supported values: "Ready"',
    );
  });

  it('answers 400 for unknown fields under fieldValidation=Strict and 422 for invalid values', () => {
    expect(() =>
      admitCustomResource(type, schema, thing({ name: 'a', junk: 1 }), { fieldValidation: 'Strict' }),
    ).toThrow(
      'Thing in version "v1" cannot be handled as a Thing: strict decoding error: unknown field "spec.junk"',
    );
    expect(() =>
      admitCustomResource(type, schema, thing({ replicas: 1 }), { fieldValidation: 'Strict' }),
    ).toThrow('Thing.x.dev "t" is invalid: spec.name: Required value');
  });

  it('lets an update keep what the old object already got wrong (ratcheting), and nothing else', () => {
    // Stored under a looser schema: a name the pattern refuses and a label value of the wrong type.
    const old = thing({
      name: 'BAD!',
      tags: ['X Y'],
      ports: [{ port: 80, protocol: 'TCP', match: { type: 'Prefix' } }],
    });
    (old.spec as { labels?: unknown }).labels = { 'app.kubernetes.io/name': 5 };
    const update = (spec: Record<string, unknown>): StoredObject =>
      thing({ ...structuredClone(old.spec as object), ...spec });
    const admit = (obj: StoredObject): string[] => {
      try {
        admitCustomResource(type, schema, obj, { fieldValidation: 'Ignore', old });
        return [];
      } catch (err) {
        return ((err as ApiStatusError).status.details?.causes ?? []).map((c) => `${c.field ?? ''}`);
      }
    };
    expect(admit(update({ replicas: 3 }))).toEqual([]);
    expect(admit(update({ name: 'BAD?' }))).toEqual(['spec.name']);
    expect(admit(update({ replicas: 'three' }))).toEqual(['spec.replicas']);
    expect(admit(update({ labels: { 'app.kubernetes.io/name': 6 } }))).toEqual([
      'spec.labels.app.kubernetes.io/name',
    ]);
    // A map list's items correspond by key, so a new item is checked and the old one is not.
    expect(admit(update({ ports: [{ port: 80 }, { port: 'x' }] }))).toEqual(['spec.ports[1].port']);
    // A required field the old object lacked too stays missing.
    const nameless = thing({ replicas: 1 });
    expect(() =>
      admitCustomResource(type, schema, thing({ replicas: 2 }), { fieldValidation: 'Ignore', old: nameless }),
    ).not.toThrow();
    expect(() =>
      admitCustomResource(type, schema, thing({ replicas: 2 }), { fieldValidation: 'Ignore' }),
    ).toThrow('spec.name: Required value');
  });

  it('refuses to compile a pattern JavaScript cannot read', () => {
    expect(() => compileCrdSchema({ type: 'string', pattern: '(' })).toThrow(CrdSchemaError);
  });
});

describe('compilePattern', () => {
  it("reads RE2's leading (?i) as a case-insensitive pattern, as the API server does", () => {
    const pattern = compilePattern('^(?i)(abort|warn)?$');
    expect(pattern.test('Abort')).toBe(true);
    expect(pattern.test('WARN')).toBe(true);
    expect(pattern.test('')).toBe(true);
    expect(pattern.test('ignore')).toBe(false);
    expect(compilePattern('(?i)^x$').test('X')).toBe(true);
  });

  it('keeps other patterns as they are, unanchored and case-sensitive', () => {
    expect(compilePattern('[a-z]+').test('ABC-def')).toBe(true);
    expect(compilePattern('^[a-z]+$').test('ABC')).toBe(false);
  });
});
