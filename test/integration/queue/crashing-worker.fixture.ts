// Test fixture process: a reconcile worker whose handler never finishes, so the test can SIGKILL it mid-job.
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { startWorker } from '../../../src/queue/start-worker.ts';

const [redisUrl = '', prefix = ''] = process.argv.slice(2);
const connection = createRedisConnection(redisUrl);
startWorker(
  'reconcile',
  async (payload) => {
    process.stdout.write(`started ${payload.namespace}/${payload.name}\n`);
    await new Promise(() => undefined);
    return { kind: 'done' };
  },
  { connection, prefix, lockDuration: 1_000, stalledInterval: 500 },
);
process.stdout.write('ready\n');
