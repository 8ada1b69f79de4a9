import { describe, expect, it } from 'vitest';
import { compileGoTemplate, NO_VALUE } from '../../../src/notify/go-template.ts';
import { NotificationConfigError } from '../../../src/notify/notification-config-error.ts';
import { thrownError } from '../../support/thrown-error.ts';

const rollout = {
  metadata: { name: 'web', namespace: 'shop', annotations: { 'rollout.argoproj.io/revision': '3' } },
  spec: {
    strategy: { canary: { steps: [{ setWeight: 20 }] } },
    template: {
      spec: {
        containers: [
          { name: 'app', image: 'shop/web:2' },
          { name: 'proxy', image: 'envoy:1' },
        ],
      },
    },
  },
  status: { phase: 'Paused', currentStepIndex: 1 },
};

const render = (source: string, data: unknown = { rollout }): string =>
  compileGoTemplate(source, 'template.t').render(data);

const errorOf = (fn: () => unknown): NotificationConfigError => thrownError(NotificationConfigError, fn);

describe('the Go template subset', () => {
  it.each([
    [
      'field chains',
      'Rollout {{.rollout.metadata.name}} in {{ .rollout.metadata.namespace }}',
      'Rollout web in shop',
    ],
    ['a missing key prints as Go does', '[{{.rollout.metadata.nope}}]', `[${NO_VALUE}]`],
    ['reading through a missing key', '[{{.rollout.nope.deeper}}]', `[${NO_VALUE}]`],
    ['numbers', 'step {{.rollout.status.currentStepIndex}}', 'step 1'],
    [
      'if on a present map, as in Argo catalog strategy fields',
      '{{if .rollout.spec.strategy.blueGreen}}BlueGreen{{end}}{{if .rollout.spec.strategy.canary}}Canary{{end}}',
      'Canary',
    ],
    ['else', '{{if .rollout.status.abort}}aborted{{else}}running{{end}}', 'running'],
    [
      'else if',
      '{{if eq .rollout.status.phase "Healthy"}}ok{{else if eq .rollout.status.phase "Paused"}}paused{{else}}?{{end}}',
      'paused',
    ],
    [
      'range with index and value, as the catalog lists containers',
      '{{range $index, $c := .rollout.spec.template.spec.containers}}{{if $index}},{{end}}{{$c.name}}={{$c.image}}{{end}}',
      'app=shop/web:2,proxy=envoy:1',
    ],
    ['range sets dot', '{{range .rollout.spec.template.spec.containers}}<{{.name}}>{{end}}', '<app><proxy>'],
    ['range else on empty', '{{range .rollout.nothing}}x{{else}}none{{end}}', 'none'],
    ['range over a map in key order', '{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}', 'a=1;b=2;'],
    ['with', '{{with .rollout.status}}{{.phase}}{{end}}', 'Paused'],
    ['trim markers', 'a  {{- "b" -}}  c', 'abc'],
    ['comments', 'a{{/* note */}}b', 'ab'],
    ['not and and/or', '{{if and (not .rollout.status.abort) .rollout.status.phase}}yes{{end}}', 'yes'],
    [
      'index on maps with dotted keys',
      '{{index .rollout.metadata.annotations "rollout.argoproj.io/revision"}}',
      '3',
    ],
    ['len and comparisons', '{{if gt (len .rollout.spec.template.spec.containers) 1}}many{{end}}', 'many'],
    ['pipelines', '{{.rollout.spec.template.spec.containers | len}}', '2'],
    ['variables', '{{$n := .rollout.metadata.name}}[{{$n}}] {{$.rollout.metadata.namespace}}', '[web] shop'],
    ['a string with braces', '{{"}}"}}', '}}'],
    [
      "the catalog's step count (Sprig add, len)",
      'step {{ add .rollout.status.currentStepIndex 1}}/{{len .rollout.spec.strategy.canary.steps}}',
      'step 2/1',
    ],
    [
      'add1, sub, mul, div, mod',
      '{{add1 1}} {{sub 7 2}} {{mul 2 3 4}} {{div 7 2}} {{mod 7 2}}',
      '2 5 24 3 1',
    ],
    ['numeric strings in arithmetic', '{{add "2" 3}}', '5'],
    [
      'upper, lower, trim',
      '{{.rollout.metadata.name | upper}} {{lower "AB"}} [{{trim "  x "}}]',
      'WEB ab [x]',
    ],
    ['default when empty, piped', '{{.rollout.status.message | default "no message"}}', 'no message'],
    ['default keeps a value', '{{.rollout.status.phase | default "?"}}', 'Paused'],
    [
      'quote and toJson',
      '{{quote .rollout.metadata.name}} {{toJson .rollout.spec.strategy}}',
      '"web" {"canary":{"steps":[{"setWeight":20}]}}',
    ],
  ])('%s', (_, source, expected) => {
    expect(render(source, { rollout, m: { b: 2, a: 1 } })).toBe(expected);
  });

  it.each([
    [
      'a Sprig function outside the subset',
      '{{.rollout.metadata.name | sha256sum}}',
      'notify.template.unsupported',
      /function "sha256sum"/,
    ],
    ['printf', '{{printf "%s" .a}}', 'notify.template.unsupported', /function "printf"/],
    ['define', '{{define "x"}}y{{end}}', 'notify.template.unsupported', /define/],
    ['an unclosed action', 'Hello {{.rollout', 'notify.template.syntax', /unclosed/],
    ['an if without end', '{{if .a}}x', 'notify.template.syntax', /without \{\{end\}\}/],
    ['a stray end', 'x{{end}}', 'notify.template.syntax', /unexpected \{\{end\}\}/],
    ['a bad character', '{{ .a ! }}', 'notify.template.syntax', /unexpected "!"/],
  ])('refuses %s, naming the key', (_, source, code, reason) => {
    const error = errorOf(() => compileGoTemplate(source, 'template.rollout-paused'));
    expect(error.code).toBe(code);
    expect(error.key).toBe('template.rollout-paused');
    expect(error.message).toMatch(/^template\.rollout-paused: line 1: /);
    expect(error.message).toMatch(reason);
  });

  it('fails at run time on data that does not fit, naming the key', () => {
    const error = errorOf(() => render('{{index .rollout.spec.template.spec.containers 5}}'));
    expect(error.code).toBe('notify.template.execution');
    expect(error.message).toMatch(/template\.t: index out of range/);
  });

  it('refuses arithmetic on what is not a number, and division by zero', () => {
    expect(errorOf(() => render('{{add .rollout.metadata.name 1}}')).message).toBe(
      'template.t: add: web is not a number',
    );
    expect(errorOf(() => render('{{div 1 0}}')).message).toBe('template.t: div: division by zero');
  });

  it('counts lines in errors', () => {
    expect(errorOf(() => compileGoTemplate('a\nb\n{{ nope }}', 'template.x')).message).toMatch(/line 3/);
  });
});
