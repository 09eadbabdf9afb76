import type { Pool, PoolClient } from 'pg';

/** Runs `fn` in one transaction on a client of `pool`: committed when it resolves, rolled back when it throws. */
export async function withTransaction(pool: Pool, fn: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
