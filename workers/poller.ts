// Process entry point: the Git poller, sync workers and webhook server (`rollgate poller`, same flags).
import { main } from '../src/cli/main.ts';

process.exitCode = await main([...process.argv.slice(0, 2), 'poller', ...process.argv.slice(2)]);
