import { parseArgs } from 'node:util';
import { hashApiKey, isWellFormedApiKey } from '../auth/api-key.ts';
import { issueApiKey, type ApiKeyRecord, type KeyStore } from '../auth/key-store.ts';
import { CliUsageError, type CliIo } from './cli-io.ts';

/** What `keys` needs from the outside world. */
export interface KeysCommandDeps {
  store: KeyStore;
  /** Tells running gateways to drop a cached key; resolves false when they could not be told. */
  announce: (keyHash: string) => Promise<boolean>;
  io: CliIo;
}

export const KEYS_USAGE = `Usage:
  gateway keys create --owner <owner> [--admin] [--json]
      Issues a key and prints it once, with its owner and creation time.
  gateway keys list [--all] [--json]
      Lists keys, masked (gw_abc…wxyz). --all includes revoked keys.
  gateway keys revoke <key-id | key> [--json]
      Revokes a key by its id (key_…) or by the key itself.

The store is PostgreSQL when DATABASE_URL is set, else the SQLite file KEY_DB_PATH.`;

function recordJson(record: ApiKeyRecord) {
  return {
    id: record.id,
    key: record.maskedKey,
    owner: record.owner,
    admin: record.admin,
    revoked: record.revoked,
    created_at: record.createdAt.toISOString(),
    revoked_at: record.revokedAt?.toISOString() ?? null,
  };
}

/** Runs `gateway keys <sub> ...`; returns the exit code. */
export async function runKeysCommand(args: readonly string[], deps: KeysCommandDeps): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create':
      return create(rest, deps);
    case 'list':
      return list(rest, deps);
    case 'revoke':
      return revoke(rest, deps);
    case undefined:
    case 'help':
    case '--help':
      deps.io.out(KEYS_USAGE);
      return sub === undefined ? 2 : 0;
    default:
      throw new CliUsageError(`unknown keys command '${sub}'`);
  }
}

function parse(args: readonly string[], options: Record<string, { type: 'string' | 'boolean' }>, allowPositionals = false) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

async function create(args: readonly string[], { store, announce, io }: KeysCommandDeps): Promise<number> {
  const { values } = parse(args, { owner: { type: 'string' }, admin: { type: 'boolean' }, json: { type: 'boolean' } });
  const owner = typeof values.owner === 'string' ? values.owner : undefined;
  if (!owner || owner.trim() === '') throw new CliUsageError('--owner <owner> is required');
  const { key, record } = await issueApiKey(store, { owner, admin: values.admin === true });
  // A gateway may remember this hash as unknown for a few seconds; tell it to forget.
  await announce(record.keyHash);
  if (values.json) {
    io.out(JSON.stringify({ ...recordJson(record), key }));
  } else {
    io.out(
      [
        `key:        ${key}`,
        `id:         ${record.id}`,
        `owner:      ${record.owner}`,
        `admin:      ${record.admin ? 'yes' : 'no'}`,
        `created_at: ${record.createdAt.toISOString()}`,
      ].join('\n'),
    );
    io.err('Store the key now: only its SHA-256 is kept, it cannot be shown again.');
  }
  return 0;
}

async function list(args: readonly string[], { store, io }: KeysCommandDeps): Promise<number> {
  const { values } = parse(args, { all: { type: 'boolean' }, json: { type: 'boolean' } });
  const records = await store.list({ includeRevoked: values.all === true });
  if (values.json) {
    io.out(JSON.stringify(records.map(recordJson)));
    return 0;
  }
  if (records.length === 0) {
    io.out(values.all ? 'No keys.' : 'No active keys (--all shows revoked ones).');
    return 0;
  }
  const rows = [
    ['ID', 'KEY', 'OWNER', 'ADMIN', 'STATUS', 'CREATED'],
    ...records.map((r) => [r.id, r.maskedKey, r.owner, r.admin ? 'yes' : 'no', r.revoked ? 'revoked' : 'active', r.createdAt.toISOString()]),
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  for (const row of rows) io.out(row.map((cell, col) => cell.padEnd(widths[col]!)).join('  ').trimEnd());
  return 0;
}

async function revoke(args: readonly string[], { store, announce, io }: KeysCommandDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, true);
  const ref = positionals[0];
  if (!ref || positionals.length > 1) throw new CliUsageError('name one key: gateway keys revoke <key-id | key>');
  const found = isWellFormedApiKey(ref) ? await store.findByHash(hashApiKey(ref)) : await store.findById(ref);
  if (!found) {
    io.err(`No such key: ${isWellFormedApiKey(ref) ? 'that key was not issued by this store' : ref}.`);
    return 1;
  }
  const wasRevoked = found.revoked;
  const record = (await store.revoke(found.id)) ?? found;
  const announced = await announce(record.keyHash);
  if (values.json) {
    io.out(JSON.stringify({ ...recordJson(record), already_revoked: wasRevoked, gateways_notified: announced }));
  } else {
    io.out(wasRevoked ? `${record.id} (${record.maskedKey}, owner ${record.owner}) was already revoked.` : `Revoked ${record.id} (${record.maskedKey}, owner ${record.owner}).`);
  }
  if (!announced) {
    io.err('Warning: running gateways could not be notified (Redis unreachable); they stop accepting the key when their cache expires (AUTH_CACHE_TTL_MS).');
  }
  return 0;
}
