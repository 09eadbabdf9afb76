import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate for 127.0.0.1 made for one test (openssl), its own CA: trust `certFile` to accept it. */
export interface SelfSignedCert {
  keyFile: string;
  certFile: string;
  key: string;
  cert: string;
  /** Deletes the files. */
  remove(): void;
}

export function selfSignedCert(): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
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
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return {
    keyFile,
    certFile,
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
