// The rollgate configuration schema: one zod definition gives the types, the defaults and the checks.
import { z } from 'zod';
import { LOG_LEVELS, normaliseLogLevel } from '../log/log-level.ts';
import { isDuration, parseDuration } from '../manifest/duration.ts';
import { DRIVEN_GROUPS } from '../manifest/driven-api.ts';
import { parseHostPattern } from '../manifest/host-pattern.ts';
import { scheduleProblem } from './cron-schedule.ts';
import { parseRedisUrl, RedisUrlError } from './redis-url.ts';
import { describeCycle, findDependencyCycle } from './source-dependencies.ts';

/**
 * A poll interval as Argo users write durations ("30s", "5m", "1h30m") or whole seconds: the spec
 * module's parser decides, so the config accepts exactly what the poller can schedule (and never 0).
 */
const durationString = z
  .union([z.string(), z.number().int().nonnegative()])
  .refine((v) => isDuration(v) && parseDuration(v) > 0, {
    message: 'must be a duration above zero such as "30s", "5m", "1h" or a whole number of seconds',
  });

/**
 * Where a secret comes from. Exactly one of the three; `secret` inline is allowed for local use but
 * `secretFile` (a mounted Kubernetes Secret) or `secretEnv` is what production should use.
 */
const secretFields = {
  secret: z.string().min(1).optional(),
  secretFile: z.string().min(1).optional(),
  secretEnv: z.string().min(1).optional(),
};
const oneSecret = (s: { secret?: string; secretFile?: string; secretEnv?: string }): boolean =>
  [s.secret, s.secretFile, s.secretEnv].filter((v) => v !== undefined).length <= 1;
const secretSource = z.object(secretFields).strict().refine(oneSecret, {
  message: 'give at most one of secret, secretFile, secretEnv',
});
/** Bitbucket Cloud signs nothing; its deliveries are verified by the hook's UUID instead. */
const bitbucketSecretSource = z
  .object({ ...secretFields, hookUuid: z.string().min(1).optional() })
  .strict()
  .refine(oneSecret, { message: 'give at most one of secret, secretFile, secretEnv' });
/**
 * Azure DevOps service hooks authenticate with HTTP basic credentials set on the subscription: the password is
 * the secret, the user name (when given) must match too.
 */
const azureDevOpsSecretSource = z
  .object({ ...secretFields, username: z.string().min(1).optional() })
  .strict()
  .refine(oneSecret, { message: 'give at most one of secret, secretFile, secretEnv' });

const sourceAuth = z
  .object({
    username: z.string().optional(),
    usernameEnv: z.string().optional(),
    password: z.string().optional(),
    passwordEnv: z.string().optional(),
    passwordFile: z.string().optional(),
    token: z.string().optional(),
    tokenEnv: z.string().optional(),
    tokenFile: z.string().optional(),
  })
  .strict();

/** A kind as a source's scope names it: `Kind`, `group/Kind` or `*`. */
const kindPattern = z
  .string()
  .regex(
    /^(\*|([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z][A-Za-z0-9]*)$/,
    'must be a kind (Deployment), a group and kind (apps/Deployment) or *',
  );

/**
 * What a source may write (docs/security.md, "Sources and the cluster"). By default: namespaced kinds in
 * its own namespace only, no cluster-scoped kind, no Role or RoleBinding.
 */
const sourceScope = z
  .object({
    /** Namespaces besides the source's own (`namespace`, or kubernetes.defaultNamespace); `*`: any. */
    namespaces: z
      .array(z.string().regex(/^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$/, 'must be a namespace name or *'))
      .default([]),
    /** Cluster-scoped kinds the source may write (`Namespace`, `apiextensions.k8s.io/CustomResourceDefinition`, `*`). */
    clusterScoped: z.array(kindPattern).default([]),
    kinds: z
      .object({
        /** When set, the only kinds the source may write; naming Role or RoleBinding here allows them. */
        allow: z.array(kindPattern).optional(),
        /** Kinds the source may never write (wins over allow). */
        deny: z.array(kindPattern).default([]),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

/**
 * How Rollgate reaches a forge's API for one repository (a promotion's pull requests, a source's commit
 * statuses); the token comes from exactly one of token, tokenEnv, tokenFile and is never logged.
 */
/**
 * A GitHub App instead of a token (provider github): its installation token is minted with the App's key
 * and minted again before it expires (docs/promotion.md, "GitHub App"). Ids inline or in files (a mounted
 * Secret), the key in a file (re-read when it changes) or an environment variable.
 */
const githubApp = z
  .object({
    appId: z.union([z.number().int().positive(), z.string().regex(/^\S+$/, 'must be an App id')]).optional(),
    appIdFile: z.string().min(1).optional(),
    installationId: z.number().int().positive().optional(),
    installationIdFile: z.string().min(1).optional(),
    privateKeyFile: z.string().min(1).optional(),
    privateKeyEnv: z.string().min(1).optional(),
  })
  .strict()
  .refine((a) => (a.appId === undefined) !== (a.appIdFile === undefined), {
    message: 'give exactly one of appId, appIdFile',
  })
  .refine((a) => (a.installationId === undefined) !== (a.installationIdFile === undefined), {
    message: 'give exactly one of installationId, installationIdFile',
  })
  .refine((a) => (a.privateKeyFile === undefined) !== (a.privateKeyEnv === undefined), {
    message: 'give exactly one of privateKeyFile, privateKeyEnv',
  });

const forgeFields = {
  provider: z.enum(['github', 'gitlab', 'gitea', 'bitbucket-cloud', 'bitbucket-datacenter', 'azure-devops']),
  apiUrl: z.string().regex(/^https?:\/\//, 'must be an http(s) URL such as https://api.github.com'),
  repository: z.string().min(1),
  token: z.string().min(1).optional(),
  tokenEnv: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
  githubApp: githubApp.optional(),
  // The token goes over plain http:// to a non-loopback apiUrl only with this set.
  allowInsecureHttp: z.boolean().default(false),
};
const oneForgeToken = (p: {
  provider: string;
  token?: string;
  tokenEnv?: string;
  tokenFile?: string;
  githubApp?: unknown;
}): boolean =>
  [p.token, p.tokenEnv, p.tokenFile, p.githubApp].filter((v) => v !== undefined).length === 1 &&
  (p.githubApp === undefined || p.provider === 'github');
const ONE_FORGE_TOKEN =
  'give exactly one of token, tokenEnv, tokenFile, githubApp (githubApp: provider github only)';

/**
 * A source's commit status (`rollgate/<source>`) on each commit it syncs (docs/sources.md, "Commit
 * statuses"): the forge that hosts its repository, and the link the status carries (a dashboard).
 */
const commitStatus = z
  .object({
    ...forgeFields,
    targetUrl: z
      .string()
      .regex(/^https?:\/\//, 'must be an http(s) URL')
      .optional(),
  })
  .strict()
  .refine(oneForgeToken, { message: ONE_FORGE_TOKEN });

/** A subscribe annotation's name, as a Rollout or a GitSource object would carry it. */
const SUBSCRIBE_KEY = /^notifications\.(argoproj\.io|rollgate\.dev)\/(subscribe\.\S+|subscriptions)$/;
const subscribeEntries = z.record(z.string(), z.string()).superRefine((entries, ctx) => {
  for (const key of Object.keys(entries))
    if (!SUBSCRIBE_KEY.test(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message:
          'must be a subscribe annotation: notifications.argoproj.io/subscribe.<trigger>.<service> ' +
          '(or notifications.argoproj.io/subscriptions)',
      });
});

const source = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (lowercase letters, digits, -)'),
    url: z.string().regex(/^(https?|file):\/\/|^\//, 'must be an http(s) URL or an absolute path'),
    branch: z.string().min(1).default('main'),
    path: z.string().default('.'),
    interval: durationString.default('30s'),
    /**
     * How long one step of an ordered sync (a sync wave, a phase's hooks) may take before the sync fails
     * (docs/sync.md, "Waves and hooks").
     */
    syncTimeout: durationString.default('5m'),
    namespace: z.string().optional(),
    /**
     * The cluster the source applies to, by its registered name (docs/clusters.md, "Targeting a cluster").
     * Absent: the local cluster (where Rollgate runs). An unknown name is a failed status on the source,
     * never a stop.
     */
    cluster: z.string().min(1).optional(),
    prune: z.boolean().default(false),
    selfHeal: z.boolean().default(false),
    scope: sourceScope,
    /**
     * Live objects no Rollgate source owns: `none` leaves them alone (a problem on the object) unless the
     * object carries `rollgate.dev/adopt: <source>`; `unowned` takes them over. Another source's object is
     * never taken.
     */
    adopt: z.enum(['none', 'unowned']).default('none'),
    /**
     * A ServiceAccount in the source's own namespace (`namespace`, else kubernetes.defaultNamespace):
     * every request of the source's sync is sent impersonating it, so its RBAC decides besides the
     * scope (docs/security.md, "Sources and the cluster"). Absent: Rollgate's own identity.
     */
    serviceAccountName: z
      .string()
      .regex(
        /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
        'must be a ServiceAccount name (lowercase letters, digits, - and .)',
      )
      .max(253)
      .optional(),
    /**
     * How the path is read (docs/sources.md, "Rendering"): `auto` renders every kustomization root found
     * under it and reads the other YAML as plain manifests; `kustomize` renders the path's kustomization;
     * `plain` reads YAML files only.
     */
    render: z
      .enum(['auto', 'plain', 'kustomize'], {
        error: 'must be auto (kustomizations found and rendered), plain (YAML files only) or kustomize',
      })
      .default('auto'),
    auth: sourceAuth.optional(),
    /**
     * Sources this one waits for: a sync of a new commit is held (status `Waiting`) until each of them is
     * Healthy at its synced commit (docs/sync.md, "Health"). Names of other sources; no cycles.
     */
    dependsOn: z.array(z.string().min(1)).optional(),
    // Credentials over plain http:// go to a non-loopback host only with this set (see checkCredentialTransport).
    allowInsecureHttp: z.boolean().default(false),
    /**
     * Who is told of the source's syncs (docs/notifications.md, "Sources"): subscribe annotations as a
     * Rollout or a GitSource object carries them, e.g. `notifications.argoproj.io/subscribe.on-sync-failed.slack: deploys`.
     */
    notifications: subscribeEntries.optional(),
    commitStatus: commitStatus.optional(),
  })
  .strict();

const promotionName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (lowercase letters, digits, -)');

/** Where a promotion's pull requests are opened; the token comes from the environment or a file. */
const pullRequest = z
  .object({
    ...forgeFields,
    labels: z.array(z.string().min(1)).default([]),
    reviewers: z.array(z.string().min(1)).default([]),
    draft: z.boolean().default(false),
    autoMerge: z.boolean().default(false),
    /** How often auto-merge re-reads the checks of an open pull request (its first look waits as long). */
    checksInterval: durationString.default('30s'),
    author: z
      .object({ name: z.string().min(1), email: z.string().min(1) })
      .strict()
      .default({ name: 'Rollgate', email: 'rollgate@users.noreply.invalid' }),
  })
  .strict()
  .refine(oneForgeToken, { message: ONE_FORGE_TOKEN })
  // Bitbucket has no pull request labels: asking for them there would be silently dropped.
  .refine((p) => !p.provider.startsWith('bitbucket-') || p.labels.length === 0, {
    path: ['labels'],
    message: 'Bitbucket pull requests have no labels: leave labels empty for a bitbucket-* provider',
  });

/** An auto-merge window (docs/promotion.md, "Gates"): cron start in a time zone, a duration, allow or deny. */
const mergeWindow = z
  .object({
    kind: z.enum(['allow', 'deny']),
    schedule: z.string().min(1),
    duration: durationString,
    timeZone: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((window, ctx) => {
    const problem = scheduleProblem(window.schedule, window.timeZone);
    if (problem === undefined) return;
    ctx.addIssue({
      code: 'custom',
      path: [problem.includes('time zone') ? 'timeZone' : 'schedule'],
      message: problem,
    });
  });

/** What a promotion waits for: a soak before its pull request, windows and an approval before auto-merge. */
const promotionGates = z
  .object({
    soak: durationString.optional(),
    windows: z.array(mergeWindow).default([]),
    requireApproval: z
      .object({ label: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();

const promotion = z
  .object({
    name: promotionName,
    from: z.object({ source: z.string().min(1), rollouts: z.array(z.string().min(1)).optional() }).strict(),
    to: z.object({ source: z.string().min(1) }).strict(),
    pullRequest,
    gates: promotionGates.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    // Bitbucket has no pull request labels: an approval label could never come, and nothing would merge.
    if (value.gates?.requireApproval !== undefined && value.pullRequest.provider.startsWith('bitbucket-'))
      ctx.addIssue({
        code: 'custom',
        path: ['gates', 'requireApproval'],
        message: 'Bitbucket pull requests have no labels: an approval label cannot be read there',
      });
    // Windows and approval gate auto-merge: without it a person merges, and a silent gate would mislead.
    if (value.pullRequest.autoMerge || value.gates === undefined) return;
    for (const key of ['windows', 'requireApproval'] as const) {
      const gate = value.gates[key];
      if (gate === undefined || (Array.isArray(gate) && gate.length === 0)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['gates', key],
        message: `gates.${key} gates auto-merge: set pullRequest.autoMerge: true, or remove it`,
      });
    }
  });

/** Where a dashboard token comes from: an environment variable or a file (never inline: it would sit in Git). */
const tokenFields = {
  tokenEnv: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
};

/** A claim name or prefix as kube-apiserver's --oidc-* flags take them. */
const claimName = z.string().min(1).max(256);

/**
 * OpenID Connect sign-in for the dashboard's page (docs/dashboard.md "Sign-in"): the authorization code flow
 * with PKCE; the user and groups are read from the ID token as kube-apiserver's --oidc-* flags read them,
 * and every action is sent to the API server as that user, so Kubernetes RBAC decides.
 */
const dashboardOidc = z
  .object({
    /** The issuer (`iss`), whose /.well-known/openid-configuration is read; https, or http on loopback only. */
    issuer: z.url({ protocol: /^https?$/ }),
    clientId: z.string().min(1),
    /** The client secret, never inline (it would sit in Git): an environment variable or a file. */
    clientSecretEnv: z.string().min(1).optional(),
    clientSecretFile: z.string().min(1).optional(),
    /** The dashboard's callback as the IdP knows it: `<dashboard address>/ui/auth/callback`. */
    redirectUrl: z.url({ protocol: /^https?$/ }),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token'))
      .default(['openid', 'profile', 'email', 'groups']),
    usernameClaim: claimName.default('email'),
    /** As --oidc-username-prefix: unset = `<issuer>#` unless the claim is `email`; `-` = no prefix. */
    usernamePrefix: z.string().max(256).optional(),
    groupsClaim: claimName.default('groups'),
    groupsPrefix: z.string().max(256).optional(),
    /** The key the session cookies are signed with (HMAC-SHA256), at least 32 characters. */
    sessionKeyEnv: z.string().min(1).optional(),
    sessionKeyFile: z.string().min(1).optional(),
    /** How long a sign-in lasts. */
    sessionSeconds: z.number().int().min(60).max(86_400).default(28_800),
  })
  .strict()
  .superRefine((o, ctx) => {
    const oneOf = (env: string | undefined, file: string | undefined, key: string): void => {
      if ((env === undefined) === (file === undefined))
        ctx.addIssue({
          code: 'custom',
          path: [`${key}Env`],
          message: `give exactly one of ${key}Env, ${key}File`,
        });
    };
    oneOf(o.clientSecretEnv, o.clientSecretFile, 'clientSecret');
    oneOf(o.sessionKeyEnv, o.sessionKeyFile, 'sessionKey');
    if (!o.scopes.includes('openid'))
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must include openid' });
    // Plain http only where nobody else can listen in: this machine.
    for (const key of ['issuer', 'redirectUrl'] as const) {
      const url = new URL(o[key]);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const loopback = host === 'localhost' || host.startsWith('127.') || host === '::1';
      if (url.protocol === 'http:' && !loopback)
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be https (http only on loopback)' });
    }
    if (new URL(o.redirectUrl).pathname !== '/ui/auth/callback')
      ctx.addIssue({
        code: 'custom',
        path: ['redirectUrl'],
        message: "must end in the dashboard's callback path /ui/auth/callback",
      });
  });

/**
 * The dashboard (docs/dashboard.md): the JSON API and page on the server's port. Reads need a token unless the
 * server is bound to loopback; the verbs are refused (403) until `actions.enabled`, which then needs a token
 * of its own.
 */
const dashboard = z
  .object({
    enabled: z.boolean().default(true),
    readTokenEnv: z.string().min(1).optional(),
    readTokenFile: z.string().min(1).optional(),
    /**
     * Host names (no port) the dashboard answers to besides loopback ones, checked against each request's
     * Host header on a loopback bind and whenever listed: a page of another site whose name DNS points at
     * this server (rebinding) is refused.
     */
    allowedHosts: z
      .array(
        z
          .string()
          .regex(
            /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/,
            'must be a host name or an IP address, without port',
          ),
      )
      .default([]),
    actions: z
      .object({ enabled: z.boolean().default(false), ...tokenFields })
      .strict()
      .prefault({}),
    oidc: dashboardOidc.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.readTokenEnv !== undefined && d.readTokenFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['readTokenFile'],
        message: 'give at most one of readTokenEnv, readTokenFile',
      });
    const { enabled, tokenEnv, tokenFile } = d.actions;
    if (tokenEnv !== undefined && tokenFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['actions', 'tokenFile'],
        message: 'give at most one of tokenEnv, tokenFile',
      });
    // Actions change rollouts: anyone who can reach the port must not be able to promote or abort.
    if (enabled && tokenEnv === undefined && tokenFile === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['actions', 'tokenEnv'],
        message:
          'actions.enabled needs a token: set dashboard.actions.tokenEnv or dashboard.actions.tokenFile',
      });
  });

/** One Sentinel as `host:port` (or `[v6]:port`, or a host alone for port 26379). */
const sentinelAddress = z.string().regex(/^(\[[^\]]+\]|[^:[\]]+)(:\d{1,5})?$/, 'must be host:port');

/**
 * Where Redis is. `url` says which server (or which Sentinels and master) and may carry the user and
 * password; the password may instead come from a file or the environment, so a URL in a ConfigMap
 * holds no secret. Sentinels can be given as keys too (`sentinels` + `name`), with the URL then only
 * saying TLS, user, password and database. Everything is read by src/queue/redis-options.ts.
 */
const redisSettings = z
  .object({
    url: z
      .string()
      .superRefine((url, ctx) => {
        try {
          parseRedisUrl(url);
        } catch (err) {
          if (!(err instanceof RedisUrlError)) throw err;
          ctx.addIssue({ code: 'custom', message: err.message });
        }
      })
      .default('redis://127.0.0.1:6379'),
    prefix: z.string().min(1).default('rollgate'),
    username: z.string().min(1).optional(),
    passwordFile: z.string().min(1).optional(),
    passwordEnv: z.string().min(1).optional(),
    /** PEM file of the CA that signed the server's certificate (rediss:// only; default: Node's CAs). */
    tlsCaFile: z.string().min(1).optional(),
    sentinels: z.array(sentinelAddress).default([]),
    /** The Sentinel master's name (with `sentinels`). */
    name: z.string().min(1).optional(),
    sentinelPasswordFile: z.string().min(1).optional(),
    sentinelPasswordEnv: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((redis, ctx) => {
    let url: ReturnType<typeof parseRedisUrl>;
    try {
      url = parseRedisUrl(redis.url);
    } catch {
      return; // already reported on `url`
    }
    const problem = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    if (redis.passwordFile !== undefined && redis.passwordEnv !== undefined)
      problem('passwordFile', 'give at most one of passwordFile, passwordEnv');
    if (url.password !== undefined && (redis.passwordFile ?? redis.passwordEnv) !== undefined)
      problem('passwordFile', 'the password is in redis.url already; give it in one place');
    if (url.username !== undefined && redis.username !== undefined)
      problem('username', 'the user is in redis.url already; give it in one place');
    if (redis.sentinelPasswordFile !== undefined && redis.sentinelPasswordEnv !== undefined)
      problem('sentinelPasswordFile', 'give at most one of sentinelPasswordFile, sentinelPasswordEnv');
    if (redis.tlsCaFile !== undefined && !url.tls) problem('tlsCaFile', 'is for TLS: use a rediss:// URL');
    const bySentinel = url.sentinelMaster !== undefined || redis.sentinels.length > 0;
    if (url.sentinelMaster !== undefined && (redis.sentinels.length > 0 || redis.name !== undefined))
      problem('sentinels', 'redis.url names the Sentinels already; give them in one place');
    if (redis.sentinels.length > 0 && redis.name === undefined)
      problem('name', "is required with redis.sentinels: the Sentinel master's name");
    if (redis.name !== undefined && redis.sentinels.length === 0 && url.sentinelMaster === undefined)
      problem('sentinels', 'is required with redis.name');
    if (!bySentinel && (redis.sentinelPasswordFile ?? redis.sentinelPasswordEnv) !== undefined)
      problem('sentinelPasswordFile', 'is for Sentinels: give redis.sentinels or a redis+sentinel:// URL');
  })
  .prefault({});

/**
 * Each `dependsOn` names another configured source, once; and no chain of them comes back to where it
 * started (each would wait for the other forever).
 */
function checkDependencies(
  sources: ReadonlyArray<{ name: string; dependsOn?: string[] | undefined }>,
  ctx: z.RefinementCtx,
): void {
  const names = new Set(sources.map((s) => s.name));
  sources.forEach((s, i) => {
    (s.dependsOn ?? []).forEach((dependency, j) => {
      const path = ['sources', i, 'dependsOn', j];
      if (!names.has(dependency))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `no source named "${dependency}" (sources: ${[...names].join(', ')})`,
        });
      else if (s.dependsOn?.indexOf(dependency) !== j)
        ctx.addIssue({ code: 'custom', path, message: `names "${dependency}" twice` });
    });
  });
  const cycle = findDependencyCycle(new Map(sources.map((s) => [s.name, s.dependsOn ?? []])));
  if (cycle === undefined) return;
  const at = sources.findIndex((s) => s.name === cycle[0]);
  ctx.addIssue({
    code: 'custom',
    path: ['sources', at, 'dependsOn'],
    message: `a dependsOn cycle: ${describeCycle(cycle)} (each would wait for the other forever)`,
  });
}

/** A host name (`*.` for subdomains), an IP address or a CIDR block, checked here so a typo names its key. */
const hostPattern = z.string().superRefine((text, ctx) => {
  const pattern = parseHostPattern(text);
  if (typeof pattern === 'string') ctx.addIssue({ code: 'custom', message: pattern });
});

/**
 * What analysis may reach and run. Link-local and cloud metadata addresses are refused whatever is
 * set here (src/analysis/providers/host-policy.ts).
 */
const analysis = z
  .object({
    /** Hosts the HTTP metric providers (web, Prometheus, Datadog, New Relic, Graphite, Wavefront, SkyWalking, Kayenta) may reach; empty: any host not denied. */
    allowedHosts: z.array(hostPattern).default([]),
    /** Refused besides link-local and metadata addresses (e.g. the API server, internal ranges). */
    deniedHosts: z.array(hostPattern).default([]),
    /**
     * ServiceAccounts a job metric's pod may name besides `default` (in the run's namespace). Rollgate
     * creates the Job, so a named account would otherwise be lent to whoever may edit a template.
     */
    jobServiceAccounts: z.array(z.string().min(1)).default([]),
  })
  .strict()
  .prefault({});

/**
 * Shortest inline secret accepted (a webhook secret, a source's password or token, a pull-request token):
 * 16 characters. Shorter ones are guessable, and a webhook HMAC is only as strong as its key. A secret
 * from `secretFile`/`secretEnv` (or `tokenFile`…) is not checked: it is generated or mounted, not typed.
 */
export const MIN_INLINE_SECRET_LENGTH = 16;

interface SecretHolders {
  webhooks: Partial<Record<string, { secret?: string | undefined } | undefined>>;
  sources: Array<{
    auth?: { password?: string | undefined; token?: string | undefined } | undefined;
    commitStatus?: { token?: string | undefined } | undefined;
  }>;
  promotions: Array<{ pullRequest: { token?: string | undefined } }>;
}

function checkInlineSecrets(config: SecretHolders, ctx: z.RefinementCtx): void {
  const check = (value: string | undefined, path: Array<string | number>): void => {
    if (value === undefined || value.length >= MIN_INLINE_SECRET_LENGTH) return;
    ctx.addIssue({
      code: 'custom',
      path,
      message:
        `an inline secret must be at least ${MIN_INLINE_SECRET_LENGTH} characters ` +
        '(or come from a file or an environment variable)',
    });
  };
  for (const [provider, ref] of Object.entries(config.webhooks))
    check(ref?.secret, ['webhooks', provider, 'secret']);
  config.sources.forEach((source, i) => {
    check(source.auth?.password, ['sources', i, 'auth', 'password']);
    check(source.auth?.token, ['sources', i, 'auth', 'token']);
    check(source.commitStatus?.token, ['sources', i, 'commitStatus', 'token']);
  });
  config.promotions.forEach((promotion, i) =>
    check(promotion.pullRequest.token, ['promotions', i, 'pullRequest', 'token']),
  );
}

/** Loopback hosts: credentials sent to them over http:// do not leave the machine. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The host of a plain-http URL that is not loopback, else undefined (https, file, paths, loopback). */
function insecureRemoteHost(url: string): string | undefined {
  if (!/^http:\/\//i.test(url)) return undefined;
  try {
    const { hostname } = new URL(url);
    return isLoopbackHost(hostname) ? undefined : hostname;
  } catch {
    return undefined;
  }
}

/**
 * Refuses credentials that would travel in clear: a source with credentials (in `auth` or in the URL)
 * whose URL is plain http:// to a non-loopback host, and a pull-request token whose apiUrl is, unless
 * the source's or pull request's `allowInsecureHttp` says the network in between is trusted.
 */
function checkCredentialTransport(config: RollgateConfigInput, ctx: z.RefinementCtx): void {
  config.sources.forEach((source, i) => {
    const status = source.commitStatus;
    const statusHost = status === undefined ? undefined : insecureRemoteHost(status.apiUrl);
    if (statusHost !== undefined && !status?.allowInsecureHttp)
      ctx.addIssue({
        code: 'custom',
        path: ['sources', i, 'commitStatus', 'apiUrl'],
        message:
          `the commit-status token would be sent in clear over http:// to ${statusHost}; use https:// ` +
          `or set sources[${i}].commitStatus.allowInsecureHttp: true if the network to it is trusted`,
      });
  });
  config.sources.forEach((source, i) => {
    const host = insecureRemoteHost(source.url);
    if (host === undefined || source.allowInsecureHttp) return;
    const credentials = source.auth !== undefined && Object.keys(source.auth).length > 0;
    let inUrl = false;
    try {
      const parsed = new URL(source.url);
      inUrl = parsed.username !== '' || parsed.password !== '';
    } catch {
      // Not a URL the check can read: the URL's own rule reports it.
    }
    if (!credentials && !inUrl) return;
    ctx.addIssue({
      code: 'custom',
      path: ['sources', i, 'url'],
      message:
        `the source's credentials would be sent in clear over http:// to ${host}; use https:// ` +
        `or set sources[${i}].allowInsecureHttp: true if the network to it is trusted`,
    });
  });
  config.promotions.forEach((promotion, i) => {
    const host = insecureRemoteHost(promotion.pullRequest.apiUrl);
    if (host === undefined || promotion.pullRequest.allowInsecureHttp) return;
    ctx.addIssue({
      code: 'custom',
      path: ['promotions', i, 'pullRequest', 'apiUrl'],
      message:
        `the pull-request token would be sent in clear over http:// to ${host}; use https:// ` +
        `or set promotions[${i}].pullRequest.allowInsecureHttp: true if the network to it is trusted`,
    });
  });
}

interface RollgateConfigInput {
  sources: Array<{
    url: string;
    allowInsecureHttp: boolean;
    auth?: object | undefined;
    commitStatus?: { apiUrl: string; allowInsecureHttp: boolean } | undefined;
  }>;
  promotions: Array<{ pullRequest: { apiUrl: string; allowInsecureHttp: boolean } }>;
}

export const configSchema = z
  .object({
    log: z
      .object({
        // Any case, `warning` and pino's numbers too (normaliseLogLevel); stored as pino's word.
        level: z
          .string()
          .transform(normaliseLogLevel)
          .pipe(
            z.enum(LOG_LEVELS, {
              error: (iss) => `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(iss.input)}`,
            }),
          )
          .default('info'),
        format: z.enum(['auto', 'json', 'pretty']).default('auto'),
      })
      .strict()
      .prefault({}),
    redis: redisSettings,
    kubernetes: z
      .object({
        kubeconfig: z.string().default(''),
        context: z.string().default(''),
        stateNamespace: z.string().min(1).default('rollgate-system'),
        defaultNamespace: z.string().min(1).default('default'),
        /** Lists and watches only this namespace (a namespaced install with Roles); empty: every namespace. */
        watchNamespace: z.string().default(''),
        /** `rollgate run|reconciler|poller` install or upgrade the CRDs at start; false where an admin installs them. */
        installCrds: z.boolean().default(true),
        /**
         * Client-side limit of API requests per second, per process (client-go's QPS; watches are not
         * counted). 0: no limit, the API server's priority and fairness is what queues Rollgate.
         */
        qps: z.number().min(0).default(0),
        /** Requests allowed at once above `qps` after a quiet spell (client-go's burst). */
        burst: z.number().int().min(1).default(100),
      })
      .strict()
      .prefault({}),
    // Which API groups this process drives (docs/controller-mode.md): Rollgate's own CRDs, Argo Rollouts'
    // (controller mode: Rollouts applied by Argo CD, Flux or kubectl, driven where they are), or both.
    controller: z
      .object({
        groups: z
          .array(
            z.enum(DRIVEN_GROUPS, {
              error: (iss) => `must be one of ${DRIVEN_GROUPS.join(', ')}, got ${JSON.stringify(iss.input)}`,
            }),
            { error: `must be a list of groups, e.g. ["argoproj.io"] (${DRIVEN_GROUPS.join(', ')})` },
          )
          .min(1, { message: `name at least one group (${DRIVEN_GROUPS.join(', ')})` })
          .refine((groups) => new Set(groups).size === groups.length, {
            message: 'names a group twice',
          })
          .default(['rollgate.dev']),
        // Where the Argo Rollouts controller would be found: a process driving argoproj.io refuses to start
        // while it runs (its leader Lease held and renewed, or its Deployment ready).
        argoRollouts: z
          .object({
            namespace: z.string().min(1).default('argo-rollouts'),
            leaseName: z.string().min(1).default('argo-rollouts-controller-lock'),
            deploymentName: z.string().min(1).default('argo-rollouts'),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    server: z
      .object({
        host: z.string().default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(8080),
      })
      .strict()
      .prefault({}),
    workers: z
      .object({
        concurrency: z.number().int().min(1).max(256).default(8),
        // 6 s: a dead process's jobs are taken over within 9 s (see takeoverBoundMs in src/queue).
        lockDurationMs: z.number().int().min(1000).default(6_000),
        // Every Rollout is reconciled again this often even when nothing it watches changed: a route
        // edited by hand (routes are not watched) is put back within one resync.
        resyncMs: z.number().int().min(1000).default(180_000),
        // The process's slots are split evenly between the namespaces that have work, so one busy
        // namespace does not hold every slot while another's rollout waits (src/process/namespace-share.ts).
        namespaceFairness: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    git: z
      .object({
        cacheDir: z.string().default('.rollgate/git'),
        webhookCoalesceMs: z.number().int().min(0).max(60_000).default(0),
        // Objects one sync writes at once; the apply plan keeps what a Rollout uses before it.
        applyConcurrency: z.number().int().min(1).max(64).default(8),
        // Sources a poller process syncs at once (each source's own syncs still run one at a time). Mostly
        // waiting on Git and the API server, so more than the cores: the first sync of 1,000 sources is
        // this many at a time.
        syncConcurrency: z.number().int().min(1).max(64).default(4),
        // A fetch refuses an object (or the object a delta builds) larger than this once inflated, before
        // inflating it (a 200 MiB file of zeros travels as 200 KB): docs/security.md, "Webhooks and Git input".
        maxObjectBytes: z
          .number()
          .int()
          .min(64 * 1024)
          .max(1024 * 1024 * 1024)
          .default(32 * 1024 * 1024),
        // A fetch stops a download (a pack, as sent) larger than this: isomorphic-git holds it whole.
        maxPackBytes: z
          .number()
          .int()
          .min(1024 * 1024)
          .max(2 * 1024 * 1024 * 1024)
          .default(256 * 1024 * 1024),
      })
      .strict()
      .prefault({}),
    dashboard: dashboard.prefault({}),
    analysis,
    // How kustomizations are rendered (src/render, docs/sources.md "Rendering"); shared by every source.
    render: z
      .object({
        // Rendered output kept by input key (the old side of a diff is normally the last sync's new side).
        cacheBytes: z
          .number()
          .int()
          .min(0)
          .default(64 * 1024 * 1024),
        kustomize: z
          .object({
            // A kustomize (or kubectl, run as `kubectl kustomize`) binary; default: kustomize on PATH, else kubectl.
            binary: z.string().min(1).optional(),
            timeoutSeconds: z.number().int().min(1).max(600).default(30),
            maxOutputBytes: z
              .number()
              .int()
              .min(1024)
              .max(1024 * 1024 * 1024)
              .default(16 * 1024 * 1024),
            concurrency: z.number().int().min(1).max(64).default(2),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    sources: z.array(source).default([]),
    promotions: z.array(promotion).default([]),
    webhooks: z
      .object({
        github: secretSource.optional(),
        gitlab: secretSource.optional(),
        gitea: secretSource.optional(),
        bitbucket: bitbucketSecretSource.optional(),
        'azure-devops': azureDevOpsSecretSource.optional(),
        generic: secretSource.optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    checkInlineSecrets(config, ctx);
    checkCredentialTransport(config, ctx);
    const seen = new Map<string, number>();
    config.sources.forEach((s, i) => {
      const first = seen.get(s.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['sources', i, 'name'],
          message: `duplicate source name "${s.name}" (also sources[${first}])`,
        });
      }
      seen.set(s.name, i);
    });
    checkDependencies(config.sources, ctx);
    const promotions = new Map<string, number>();
    config.promotions.forEach((p, i) => {
      const first = promotions.get(p.name);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['promotions', i, 'name'],
          message: `duplicate promotion name "${p.name}" (also promotions[${first}])`,
        });
      promotions.set(p.name, i);
      for (const end of ['from', 'to'] as const) {
        if (!seen.has(p[end].source))
          ctx.addIssue({
            code: 'custom',
            path: ['promotions', i, end, 'source'],
            message: `no source named "${p[end].source}" (sources: ${[...seen.keys()].join(', ') || 'none'})`,
          });
      }
      if (p.from.source === p.to.source)
        ctx.addIssue({
          code: 'custom',
          path: ['promotions', i, 'to', 'source'],
          message: 'a promotion goes from one source to another',
        });
    });
  });

export type RollgateConfig = z.infer<typeof configSchema>;
export type SourceConfig = RollgateConfig['sources'][number];
export type PromotionConfig = RollgateConfig['promotions'][number];
export type DashboardConfig = RollgateConfig['dashboard'];
export type DashboardOidcConfig = NonNullable<DashboardConfig['oidc']>;
export type AnalysisConfig = RollgateConfig['analysis'];
export type RenderConfig = RollgateConfig['render'];

export type RedisSettings = RollgateConfig['redis'];
export type ControllerConfig = RollgateConfig['controller'];
