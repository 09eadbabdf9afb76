import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { describeIssues } from '../../chat/request-schema.ts';
import { keyRecordJson } from '../../auth/key-record-json.ts';
import { InvalidKeyPolicyError, keyPolicySchema, mergeKeyPolicy } from '../../auth/key-policy.ts';
import { InvalidOwnerError, issueApiKey, type ApiKeyRecord, type KeyStore } from '../../auth/key-store.ts';
import { GatewayError, InvalidRequestError, NotFoundError, ServiceUnavailableError } from '../../errors/catalog.ts';
import { usageReport } from '../../usage/key-usage.ts';

/** Dependencies of {@link adminKeysRouter}. */
export interface AdminKeysDeps {
  store: KeyStore;
  /** Tells every API process to drop its cached lookup of a key hash. */
  announce: (keyHash: string) => Promise<unknown>;
  /** Stops the work a revoked key left running (its batches). @defaultValue nothing */
  onRevoked?: (keyId: string) => Promise<unknown>;
}

/** Body of `POST /admin/keys`: owner, admin flag and any policy field. */
export const createKeyBodySchema = keyPolicySchema
  .extend({ owner: z.string().describe('Owner id (1-128 printable characters).'), admin: z.boolean().default(false) })
  .meta({ id: 'CreateKeyRequest' });

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `/admin/keys` (admin keys only, like every `/admin` path): list, create,
 * get, update (PATCH with policy fields, `null` clears one), revoke (DELETE,
 * which also cancels the key's running batches) and usage per model and day. Every change is announced so all API
 * replicas apply it at once rather than after their key cache TTL.
 */
export function adminKeysRouter(deps: AdminKeysDeps): Router {
  const router = Router();
  const { store } = deps;

  router.get('/admin/keys', async (req: Request, res: Response) => {
    const records = await guard(store.list({ includeRevoked: req.query.all === 'true' }));
    res.json({ data: records.map(keyRecordJson) });
  });

  router.post('/admin/keys', async (req: Request, res: Response) => {
    const parsed = createKeyBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new InvalidRequestError(`Invalid key: ${describeIssues(parsed.error)}`);
    const { owner, admin, ...policy } = parsed.data;
    const issued = await guard(issueApiKey(store, { owner, admin, policy: policyOf(policy) }));
    await deps.announce(issued.record.keyHash);
    res.status(201).json({ ...keyRecordJson(issued.record), key: issued.key });
  });

  router.get('/admin/keys/:id', async (req: Request, res: Response) => {
    res.json(keyRecordJson(await found(store, req.params.id)));
  });

  router.patch('/admin/keys/:id', async (req: Request, res: Response) => {
    const record = await found(store, req.params.id);
    const updated = await guard(store.updatePolicy(record.id, policyOf(req.body ?? {}, record)));
    await deps.announce(record.keyHash);
    res.json(keyRecordJson(updated ?? record));
  });

  router.delete('/admin/keys/:id', async (req: Request, res: Response) => {
    const record = await found(store, req.params.id);
    const revoked = await guard(store.revoke(record.id));
    await deps.announce(record.keyHash);
    if (deps.onRevoked) await guard(deps.onRevoked(record.id));
    res.json(keyRecordJson(revoked ?? record));
  });

  router.get('/admin/keys/:id/usage', async (req: Request, res: Response) => {
    const record = await found(store, req.params.id);
    const from = dayParam(req.query.from, 'from');
    const to = dayParam(req.query.to, 'to');
    const rows = await guard(
      store.usage({ keyId: record.id, ...(from ? { fromDay: from } : {}), ...(to ? { toDay: to } : {}) }),
    );
    res.json({
      id: record.id,
      key: record.maskedKey,
      owner: record.owner,
      metadata: record.policy.metadata ?? {},
      ...usageReport(rows),
    });
  });
  return router;
}

function policyOf(input: unknown, base?: ApiKeyRecord) {
  try {
    return mergeKeyPolicy(base?.policy ?? {}, input);
  } catch (err) {
    if (err instanceof InvalidKeyPolicyError) throw new InvalidRequestError(`Invalid key policy: ${err.message}`);
    throw err;
  }
}

async function found(store: KeyStore, param: string | string[] | undefined): Promise<ApiKeyRecord> {
  const id = typeof param === 'string' ? param : undefined;
  const record = id ? await guard(store.findById(id)) : undefined;
  if (!record) throw new NotFoundError(`No key with id '${String(id).slice(0, 64)}'.`);
  return record;
}

function dayParam(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !DAY.test(value))
    throw new InvalidRequestError(`'${name}' must be a day as YYYY-MM-DD.`);
  return value;
}

/** Key store failures are the gateway's, and temporary: 503 instead of 500; a bad owner is the client's. */
async function guard<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof InvalidOwnerError) throw new InvalidRequestError(err.message);
    if (err instanceof GatewayError) throw err;
    throw new ServiceUnavailableError('The gateway cannot reach its key store; try again shortly.', { cause: err });
  }
}
