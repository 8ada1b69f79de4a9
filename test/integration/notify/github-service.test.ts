// The github service against a GitHub double judged by GitHub's OpenAPI description: App token, commit status, deployment.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { fetchHttpCall } from '../../../src/notify/services/notification-sender.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';
import {
  GITHUB_APP_ID,
  GITHUB_INSTALLATION_ID,
  startGitHubNotifyDouble,
  type GitHubNotifyDouble,
} from '../../support/notify/github-notify-double.ts';

let github: GitHubNotifyDouble;
beforeAll(async () => {
  github = await startGitHubNotifyDouble();
});
afterAll(async () => {
  await github.stop();
});
afterEach(() => {
  expect(github.violations).toEqual([]);
});

const COMMIT = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c';
const rollout = {
  metadata: { name: 'web', namespace: 'shop', annotations: { 'rollgate.dev/commit': COMMIT } },
  status: { currentPodHash: '6f7d9c' },
};

function configOf(template: string) {
  return parseNotificationConfig(
    {
      'service.github': `appID: ${GITHUB_APP_ID}\ninstallationID: ${GITHUB_INSTALLATION_ID}\nprivateKey: $github-key\nenterpriseBaseURL: ${github.url}\n`,
      'template.rollout-completed': template,
    },
    { 'github-key': github.privateKey },
  );
}

async function deliver(template: string, data: Record<string, unknown> = { rollout }) {
  const config = configOf(template);
  const notification = config.templates.get('rollout-completed')!.render(data);
  return sendNotification(
    {
      service: config.services.get('github')!,
      recipient: '',
      notification,
      templateKey: 'template.rollout-completed',
    },
    fetchHttpCall,
  );
}

const TEMPLATE = [
  'message: Rollout {{.rollout.metadata.name}} completed at {{.rollout.status.currentPodHash}}',
  'github:',
  '  repoURLPath: https://github.com/acme/shop-deploy.git',
  '  status:',
  '    state: success',
  '    label: "continuous-delivery/{{.rollout.metadata.name}}"',
  '    targetURL: "https://rollgate.example.test/rollouts/{{.rollout.metadata.name}}"',
  '  deployment:',
  '    state: success',
  '    environment: "{{.rollout.metadata.namespace}}"',
  '    environmentURL: "https://{{.rollout.metadata.name}}.example.test"',
  '    requiredContexts: []',
  '    autoMerge: false',
].join('\n');

describe('github', () => {
  it("sets a commit status and a deployment on the Rollout's commit, with an App installation token", async () => {
    expect(await deliver(TEMPLATE)).toBe('sent');
    expect(github.statuses).toEqual([
      {
        repo: 'acme/shop-deploy',
        sha: COMMIT,
        state: 'success',
        context: 'continuous-delivery/web',
        description: 'Rollout web completed at 6f7d9c',
        target_url: 'https://rollgate.example.test/rollouts/web',
      },
    ]);
    expect(github.deployments).toEqual([
      {
        id: 1,
        repo: 'acme/shop-deploy',
        ref: COMMIT,
        environment: 'shop',
        statuses: [
          {
            state: 'success',
            description: 'Rollout web completed at 6f7d9c',
            environment_url: 'https://web.example.test',
          },
        ],
      },
    ]);
    // The same commit and environment again: the deployment is reused, a status added.
    expect(await deliver(TEMPLATE)).toBe('sent');
    expect(github.deployments).toHaveLength(1);
    expect(github.deployments[0]!.statuses).toHaveLength(2);
  });

  it("reads a source's URL and commit by default", async () => {
    const template = [
      'message: apps synced',
      'github:',
      '  status:',
      '    state: pending',
      '    label: sync',
    ].join('\n');
    await deliver(template, { source: { url: 'https://github.com/acme/apps', status: { commit: COMMIT } } });
    expect(github.statuses.at(-1)).toMatchObject({
      repo: 'acme/apps',
      sha: COMMIT,
      state: 'pending',
      context: 'sync',
    });
  });

  it('gives up, calling nothing, when the rendered repository or revision is not one', async () => {
    const calls = github.tokens.length;
    const noCommit = { rollout: { ...rollout, metadata: { name: 'web' } } };
    let failure: unknown;
    try {
      await deliver(TEMPLATE, noCommit);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(NotificationDeliveryError);
    expect((failure as NotificationDeliveryError).message).toBe(
      'service.github: template.rollout-completed: github.revisionPath is not a commit id once rendered',
    );
    expect(github.tokens.length).toBe(calls);
  });
});
