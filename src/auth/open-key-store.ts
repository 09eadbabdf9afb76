import type { Settings } from '../config/settings.ts';
import type { KeyStore } from './key-store.ts';
import { PostgresKeyStore } from './postgres-key-store.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

/**
 * The key store the settings ask for: PostgreSQL when `DATABASE_URL` is set,
 * otherwise the SQLite file at `KEY_DB_PATH`. Nothing is opened yet: the first
 * call connects and migrates, so an unreachable database never blocks a start.
 */
export function openKeyStore(
  settings: Pick<Settings, 'DATABASE_URL' | 'KEY_DB_PATH'>,
  options: { onError?: (err: Error) => void } = {},
): KeyStore {
  if (settings.DATABASE_URL) {
    return new PostgresKeyStore({
      connectionString: settings.DATABASE_URL,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }
  return new SqliteKeyStore({ path: settings.KEY_DB_PATH });
}

/** Where the keys live, for logs: never the password of a URL. */
export function describeKeyStore(settings: Pick<Settings, 'DATABASE_URL' | 'KEY_DB_PATH'>): string {
  if (!settings.DATABASE_URL) return `sqlite:${settings.KEY_DB_PATH}`;
  try {
    const url = new URL(settings.DATABASE_URL);
    return `postgres://${url.host}${url.pathname}`;
  } catch {
    return 'postgres (DATABASE_URL is not a URL)';
  }
}
