import { parseArgs } from 'node:util';
import { hashApiKey, isWellFormedApiKey } from '../auth/api-key.ts';
import { InvalidKeyPolicyError, mergeKeyPolicy, type KeyPolicy } from '../auth/key-policy.ts';
import { keyRecordJson } from '../auth/key-record-json.ts';
import { issueApiKey, type ApiKeyRecord, type KeyStore } from '../auth/key-store.ts';
import { usageReport } from '../usage/key-usage.ts';
import { CliUsageError, type CliIo } from './cli-io.ts';
import { POLICY_FLAGS, POLICY_USAGE, policyFromFlags } from './key-policy-flags.ts';

/** What `keys` needs from the outside world. */
export interface KeysCommandDeps {
  store: KeyStore;
  /** Tells running gateways to drop a cached key; resolves false when they could not be told. */
  announce: (keyHash: string) => Promise<boolean>;
  /** Cancels the running batches of a revoked key; resolves how many. @defaultValue none are cancelled */
  cancelBatches?: (keyId: string) => Promise<number>;
  io: CliIo;
}

export const KEYS_USAGE = `Usage:
  gateway keys create --owner <owner> [--admin] [limits] [--json]
      Issues a key and prints it once, with its owner and creation time.
  gateway keys update <key-id | key> [limits] [--json]
      Changes a key's limits; running gateways apply them at once.
  gateway keys show <key-id | key> [--json]
      Prints one key (masked) with its limits.
  gateway keys usage <key-id | key> [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]
      Requests, tokens and spend per model and day.
  gateway keys list [--all] [--json]
      Lists keys, masked (gw_abc…wxyz). --all includes revoked keys.
  gateway keys revoke <key-id | key> [--json]
      Revokes a key by its id (key_…) or by the key itself, and cancels its running batches.

${POLICY_USAGE}

The store is PostgreSQL when DATABASE_URL is set, else the SQLite file KEY_DB_PATH.`;

/** Runs `gateway keys <sub> ...`; returns the exit code. */
export async function runKeysCommand(args: readonly string[], deps: KeysCommandDeps): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create':
      return create(rest, deps);
    case 'update':
      return update(rest, deps);
    case 'show':
      return show(rest, deps);
    case 'usage':
      return usage(rest, deps);
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

function parse(
  args: readonly string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

async function create(args: readonly string[], { store, announce, io }: KeysCommandDeps): Promise<number> {
  const { values } = parse(args, {
    owner: { type: 'string' },
    admin: { type: 'boolean' },
    json: { type: 'boolean' },
    ...POLICY_FLAGS,
  });
  const owner = typeof values.owner === 'string' ? values.owner : undefined;
  if (!owner || owner.trim() === '') throw new CliUsageError('--owner <owner> is required');
  const policy = policyOf({}, policyFromFlags(values));
  const { key, record } = await issueApiKey(store, { owner, admin: values.admin === true, policy });
  // A gateway may remember this hash as unknown for a few seconds; tell it to forget.
  await announce(record.keyHash);
  if (values.json) {
    io.out(JSON.stringify({ ...keyRecordJson(record), key }));
  } else {
    io.out(
      [
        `key:        ${key}`,
        `id:         ${record.id}`,
        `owner:      ${record.owner}`,
        `admin:      ${record.admin ? 'yes' : 'no'}`,
        `created_at: ${record.createdAt.toISOString()}`,
        ...policyLines(record.policy),
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
    io.out(JSON.stringify(records.map(keyRecordJson)));
    return 0;
  }
  if (records.length === 0) {
    io.out(values.all ? 'No keys.' : 'No active keys (--all shows revoked ones).');
    return 0;
  }
  printTable(io, [
    ['ID', 'KEY', 'OWNER', 'ADMIN', 'STATUS', 'CREATED'],
    ...records.map((r) => [
      r.id,
      r.maskedKey,
      r.owner,
      r.admin ? 'yes' : 'no',
      r.revoked ? 'revoked' : 'active',
      r.createdAt.toISOString(),
    ]),
  ]);
  return 0;
}

async function update(args: readonly string[], { store, announce, io }: KeysCommandDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, ...POLICY_FLAGS }, true);
  const found = await findKey(store, io, positionals, 'update');
  if (!found) return 1;
  const patch = policyFromFlags(values);
  if (Object.keys(patch).length === 0)
    throw new CliUsageError('name at least one limit to change (see gateway keys --help)');
  const record = (await store.updatePolicy(found.id, policyOf(found.policy, patch))) ?? found;
  const announced = await announce(record.keyHash);
  if (values.json) io.out(JSON.stringify({ ...keyRecordJson(record), gateways_notified: announced }));
  else
    io.out(
      [`Updated ${record.id} (${record.maskedKey}, owner ${record.owner}).`, ...policyLines(record.policy)].join('\n'),
    );
  if (!announced)
    io.err(
      'Warning: running gateways could not be notified (Redis unreachable); they apply the change when their cache expires (AUTH_CACHE_TTL_MS).',
    );
  return 0;
}

async function show(args: readonly string[], { store, io }: KeysCommandDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, true);
  const record = await findKey(store, io, positionals, 'show');
  if (!record) return 1;
  if (values.json) io.out(JSON.stringify(keyRecordJson(record)));
  else
    io.out(
      [
        `id:         ${record.id}`,
        `key:        ${record.maskedKey}`,
        `owner:      ${record.owner}`,
        `revoked:    ${record.revoked ? 'yes' : 'no'}`,
        ...policyLines(record.policy),
      ].join('\n'),
    );
  return 0;
}

async function usage(args: readonly string[], { store, io }: KeysCommandDeps): Promise<number> {
  const { values, positionals } = parse(
    args,
    { json: { type: 'boolean' }, from: { type: 'string' }, to: { type: 'string' } },
    true,
  );
  const record = await findKey(store, io, positionals, 'usage');
  if (!record) return 1;
  const day = (value: unknown, flag: string) => {
    if (value === undefined) return {};
    if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value))
      throw new CliUsageError(`${flag} takes a day as YYYY-MM-DD`);
    return flag === '--from' ? { fromDay: value } : { toDay: value };
  };
  const report = usageReport(
    await store.usage({ keyId: record.id, ...day(values.from, '--from'), ...day(values.to, '--to') }),
  );
  if (values.json) {
    io.out(JSON.stringify({ id: record.id, key: record.maskedKey, owner: record.owner, ...report }));
    return 0;
  }
  const header = ['DAY', 'MODEL', 'REQUESTS', 'PROMPT', 'CACHED', 'CACHE_WRITE', 'COMPLETION', 'REASONING', 'COST_USD'];
  const rows = [
    header,
    ...report.by_day.map((r) => [
      r.day,
      r.model,
      String(r.requests),
      String(r.prompt_tokens),
      String(r.cached_tokens),
      String(r.cache_write_tokens),
      String(r.completion_tokens),
      String(r.reasoning_tokens),
      r.cost_usd.toFixed(6),
    ]),
  ];
  printTable(io, rows);
  io.out(
    `total: ${report.total.requests} requests, ${report.total.prompt_tokens + report.total.completion_tokens} tokens, ${report.total.cost_usd.toFixed(6)} USD`,
  );
  return 0;
}

/** The key a positional names, by id or by the key itself; prints why not when there is none. */
async function findKey(
  store: KeyStore,
  io: CliIo,
  positionals: readonly string[],
  command: string,
): Promise<ApiKeyRecord | undefined> {
  const ref = positionals[0];
  if (!ref || positionals.length > 1) throw new CliUsageError(`name one key: gateway keys ${command} <key-id | key>`);
  const found = isWellFormedApiKey(ref) ? await store.findByHash(hashApiKey(ref)) : await store.findById(ref);
  if (!found) io.err(`No such key: ${isWellFormedApiKey(ref) ? 'that key was not issued by this store' : ref}.`);
  return found;
}

function policyOf(base: KeyPolicy, patch: unknown): KeyPolicy {
  try {
    return mergeKeyPolicy(base, patch);
  } catch (err) {
    if (err instanceof InvalidKeyPolicyError) throw new CliUsageError(err.message);
    throw err;
  }
}

/** The policy as `field: value` lines, for the human-readable output. */
function policyLines(policy: KeyPolicy): string[] {
  return Object.entries(policy).map(
    ([field, value]) => `${`${field}:`.padEnd(16)}${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
  );
}

function printTable(io: CliIo, rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  for (const row of rows)
    io.out(
      row
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join('  ')
        .trimEnd(),
    );
}

async function revoke(
  args: readonly string[],
  { store, announce, cancelBatches, io }: KeysCommandDeps,
): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, true);
  const found = await findKey(store, io, positionals, 'revoke');
  if (!found) return 1;
  const wasRevoked = found.revoked;
  const record = (await store.revoke(found.id)) ?? found;
  const announced = await announce(record.keyHash);
  const cancelled = cancelBatches ? await cancelBatches(record.id) : 0;
  if (values.json) {
    io.out(
      JSON.stringify({
        ...keyRecordJson(record),
        already_revoked: wasRevoked,
        gateways_notified: announced,
        batches_cancelled: cancelled,
      }),
    );
  } else {
    io.out(
      wasRevoked
        ? `${record.id} (${record.maskedKey}, owner ${record.owner}) was already revoked.`
        : `Revoked ${record.id} (${record.maskedKey}, owner ${record.owner}).`,
    );
    if (cancelled > 0) io.out(`Cancelled ${cancelled} running batch${cancelled === 1 ? '' : 'es'} of the key.`);
  }
  if (!announced) {
    io.err(
      'Warning: running gateways could not be notified (Redis unreachable); they stop accepting the key when their cache expires (AUTH_CACHE_TTL_MS).',
    );
  }
  return 0;
}
