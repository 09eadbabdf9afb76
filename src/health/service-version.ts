import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The `version` of package.json: what /health reports. `0.0.0` when it cannot be read. */
export function serviceVersion(packageJsonPath = resolve(import.meta.dirname, '../../package.json')): string {
  try {
    const { version } = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
