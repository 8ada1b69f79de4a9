// A TCP port on 127.0.0.1 that is free right now, for a server that must be told its port before it starts.
import { createServer } from 'node:net';

/**
 * Binds port 0 on 127.0.0.1, reads the port the system chose and closes it again. Another process may
 * take the port before the caller binds it; good enough for local servers started a moment later.
 */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
