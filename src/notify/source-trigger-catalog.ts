// The built-in source triggers and their default templates, as ConfigMap entries (Argo CD's catalog, for sources).

/**
 * What a ConfigMap without these keys gets: each source trigger sends its template, and each template
 * says the source (and its cluster, when it is not the local one), the commit, the message and the problems (`message`, which Slack and Teams send; a
 * webhook needs a `webhook.<service>` block of the user's own). A `trigger.<name>` or `template.<name>`
 * key of the ConfigMap replaces the entry of the same key.
 */
export const SOURCE_TRIGGER_CATALOG: Readonly<Record<string, string>> = {
  'trigger.on-sync-failed': '- send: [source-sync-failed]\n',
  'trigger.on-sync-succeeded': '- send: [source-sync-succeeded]\n',
  'trigger.on-health-degraded': '- send: [source-health-degraded]\n',
  'template.source-sync-failed': [
    'message: |',
    '  Source {{.source.name}}{{if ne .cluster .localCluster}} (cluster {{.cluster}}){{end}} failed to sync ({{.source.status.phase}}): {{.source.status.message}}',
    '  Commit: {{with .source.status.commit}}{{.}}{{else}}none synced yet{{end}}',
    '  Repository: {{.source.url}} (branch {{.source.branch}}, path {{.source.path}})',
    '  {{- range .source.status.problems}}',
    '  - {{.file}}:{{.line}}: {{.message}}',
    '  {{- end}}',
    '',
  ].join('\n'),
  'template.source-sync-succeeded': [
    'message: |',
    '  Source {{.source.name}}{{if ne .cluster .localCluster}} (cluster {{.cluster}}){{end}} synced commit {{.source.status.commit}}: {{.source.status.message}}',
    '  Repository: {{.source.url}} (branch {{.source.branch}}, path {{.source.path}})',
    '',
  ].join('\n'),
  'template.source-health-degraded': [
    'message: |',
    '  Source {{.source.name}}{{if ne .cluster .localCluster}} (cluster {{.cluster}}){{end}} is Degraded at commit {{.source.status.commit}}: {{.source.status.health.message}}',
    '  Repository: {{.source.url}} (branch {{.source.branch}}, path {{.source.path}})',
    '',
  ].join('\n'),
};
