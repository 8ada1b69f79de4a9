// A loopback port for a test that keeps it closed on purpose for a while: "nothing answers here (yet)",
// or a server stopped and started again on the same port. Test files run in parallel forks, and a port
// from freePort (the system's choice for port 0) can be handed to another file's server the moment it
// is closed: once, a "Redis not there yet" port answered NOAUTH from another file's password-protected
// redis-server. The system never chooses a port below its ephemeral range for port 0, so a port taken
// from below it can only collide with another caller of this function (one chance in thousands).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Ports below the ephemeral range to choose from. */
const SPAN = 10_000;
/** Linux's default lower bound, for a system that does not say. */
const DEFAULT_EPHEMERAL_LOW = 32_768;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > SPAN + 1024 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that nothing listens on now, and that no freePort or port-0 server can be given. */
export async function closedLoopbackPort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = low - SPAN + Math.floor(Math.random() * SPAN);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port found in ${low - SPAN}..${low - 1}`);
}
