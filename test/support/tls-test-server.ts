// An HTTPS server on 127.0.0.1 with a self-signed certificate made by openssl, for clients that must verify TLS.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsTestServer {
  server: Server;
  /** `https://127.0.0.1:PORT`. */
  url: string;
  /** The certificate (PEM), which a client names as its CA to trust this server and no other. */
  cert: Buffer;
  /** Drops open connections and closes the server. */
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1 (its CN and its IP subjectAltName), valid one day. */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts an HTTPS server on a free port of 127.0.0.1 answering with `handler`. */
export async function startTlsTestServer(handler: RequestListener): Promise<TlsTestServer> {
  const { key, cert } = selfSignedCertificate();
  const server = createServer({ key, cert }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cert,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
