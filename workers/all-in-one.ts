// Process entry point: poll, sync and reconcile workers and the webhook server in one process (`rollgate run`, same flags).
import { main } from '../src/cli/main.ts';

process.exitCode = await main([...process.argv.slice(0, 2), 'run', ...process.argv.slice(2)]);
