// Process entry point: the reconcile workers and cluster watches (`rollgate reconciler`, same flags).
import { main } from '../src/cli/main.ts';

process.exitCode = await main([...process.argv.slice(0, 2), 'reconciler', ...process.argv.slice(2)]);
