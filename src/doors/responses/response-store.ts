import type { SqlDb } from '../../batches/sql-db.ts';
import type { ChatMessage } from '../../chat/types.ts';
import { InvalidRequestError, NotFoundError } from '../../errors/catalog.ts';
import type { StoredInputItem } from './input-items.ts';

/** One stored response: what `POST /v1/responses` with `store` keeps. */
export interface StoredResponse {
  id: string;
  owner: string;
  /** Epoch seconds. */
  createdAt: number;
  previousResponseId: string | null;
  /** The `response` object as the client got it. */
  response: Record<string, unknown>;
  /** This request's input items, as `input_items` lists them. */
  inputItems: StoredInputItem[];
  /** The canonical messages of this turn, its input (after DLP) then the reply, replayed by a later `previous_response_id`. */
  turn: ChatMessage[];
}

/** A response a native Responses upstream keeps (`responses_api: native`): the gateway records whose it is. */
export interface NativeResponseRecord {
  /** The upstream's response id. */
  id: string;
  owner: string;
  /** The provider that made it, which the retrieve, delete and input_items of the id go to. */
  provider: string;
  /** The model as the client named it. */
  model: string;
  /** Epoch seconds. */
  createdAt: number;
}

/** Options of {@link ResponseStore}. */
export interface ResponseStoreOptions {
  db: SqlDb;
  /** Seconds a response is kept after its creation (`RESPONSES_TTL`). */
  ttlSeconds: number;
  /** Longest chain of `previous_response_id` links followed. @defaultValue 1000 */
  maxChain?: number;
  /** Seconds between two removals of expired rows, done on a write. @defaultValue 60 */
  purgeEverySeconds?: number;
  /** Clock, epoch ms. @defaultValue Date.now */
  now?: () => number;
}

export interface InputItemsPage {
  object: 'list';
  data: StoredInputItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

interface Row {
  id: string;
  owner: string;
  previous_response_id: string | null;
  response: string;
  input_items: string;
  turn: string;
}

/**
 * Stored responses in the key-store database (SQLite, or PostgreSQL with
 * `DATABASE_URL`), each scoped to the owner of the key that made it: another
 * owner's id reads as unknown (404), as does an expired one. Expired rows are
 * removed on later writes, at most once a minute.
 */
export class ResponseStore {
  private readonly db: SqlDb;
  private readonly ttlSeconds: number;
  private readonly maxChain: number;
  private readonly purgeEvery: number;
  private readonly now: () => number;
  private lastPurge = 0;

  constructor(options: ResponseStoreOptions) {
    this.db = options.db;
    this.ttlSeconds = options.ttlSeconds;
    this.maxChain = options.maxChain ?? 1000;
    this.purgeEvery = options.purgeEverySeconds ?? 60;
    this.now = options.now ?? Date.now;
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async save(record: StoredResponse): Promise<void> {
    const now = this.seconds();
    await this.db.run(
      'INSERT INTO gateway_responses (id, owner, created_at, expires_at, previous_response_id, response, input_items, turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [
        record.id,
        record.owner,
        record.createdAt,
        record.createdAt + this.ttlSeconds,
        record.previousResponseId,
        JSON.stringify(record.response),
        JSON.stringify(record.inputItems),
        JSON.stringify(record.turn),
      ],
    );
    await this.purge(now);
  }

  private async purge(now: number): Promise<void> {
    if (now - this.lastPurge < this.purgeEvery) return;
    this.lastPurge = now;
    await this.db.run('DELETE FROM gateway_responses WHERE expires_at <= ?', [now]);
    await this.db.run('DELETE FROM gateway_native_responses WHERE expires_at <= ?', [now]);
  }

  /** Records a native upstream's response id as the owner's, for `RESPONSES_TTL` seconds. */
  async saveNative(record: NativeResponseRecord): Promise<void> {
    await this.db.run(
      'INSERT INTO gateway_native_responses (id, owner, provider, model, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      [record.id, record.owner, record.provider, record.model, record.createdAt, record.createdAt + this.ttlSeconds],
    );
    await this.purge(this.seconds());
  }

  /** The provider and model of the owner's native response `id`; undefined when it is not the owner's (or unknown, or expired). */
  async native(id: string, owner: string): Promise<{ provider: string; model: string } | undefined> {
    const rows = await this.db.all<{ provider: string; model: string }>(
      'SELECT provider, model FROM gateway_native_responses WHERE id = ? AND owner = ? AND expires_at > ?',
      [id, owner, this.seconds()],
    );
    return rows[0];
  }

  /** Forgets the owner's native response `id` (deleted upstream). */
  async forgetNative(id: string, owner: string): Promise<void> {
    await this.db.run('DELETE FROM gateway_native_responses WHERE id = ? AND owner = ?', [id, owner]);
  }

  private async row(id: string, owner: string): Promise<Row | undefined> {
    const rows = await this.db.all<Row>(
      'SELECT id, owner, previous_response_id, response, input_items, turn FROM gateway_responses WHERE id = ? AND owner = ? AND expires_at > ?',
      [id, owner, this.seconds()],
    );
    return rows[0];
  }

  private async found(id: string, owner: string): Promise<Row> {
    const row = await this.row(id, owner);
    if (!row) throw new NotFoundError(`No response with id '${id.slice(0, 64)}'.`);
    return row;
  }

  async get(id: string, owner: string): Promise<Record<string, unknown>> {
    return JSON.parse((await this.found(id, owner)).response) as Record<string, unknown>;
  }

  async delete(id: string, owner: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const changed = await this.db.run('DELETE FROM gateway_responses WHERE id = ? AND owner = ? AND expires_at > ?', [
      id,
      owner,
      this.seconds(),
    ]);
    if (changed === 0) throw new NotFoundError(`No response with id '${id.slice(0, 64)}'.`);
    return { id, object: 'response', deleted: true };
  }

  /** A page of the response's input items, in OpenAI's list shape; `order` `desc` (newest first) by default, as at OpenAI. */
  async inputItems(
    id: string,
    owner: string,
    page: { after?: string; before?: string; limit: number; order: 'asc' | 'desc' },
  ): Promise<InputItemsPage> {
    const items = JSON.parse((await this.found(id, owner)).input_items) as StoredInputItem[];
    if (page.order === 'desc') items.reverse();
    let start = 0;
    let end = items.length;
    if (page.after !== undefined) {
      const at = items.findIndex((item) => item.id === page.after);
      if (at < 0) throw new InvalidRequestError(`after: no input item '${page.after.slice(0, 64)}' in this response.`);
      start = at + 1;
    }
    if (page.before !== undefined) {
      const at = items.findIndex((item) => item.id === page.before);
      if (at < 0)
        throw new InvalidRequestError(`before: no input item '${page.before.slice(0, 64)}' in this response.`);
      end = at;
    }
    const data = items.slice(start, Math.max(start, end)).slice(0, page.limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: start + data.length < end,
    };
  }

  /**
   * The canonical messages of the conversation up to and including `id`,
   * oldest turn first: what the upstream must see before the next input. A
   * missing link (deleted, expired, another owner's) is a 404 naming it.
   */
  async conversation(id: string, owner: string): Promise<ChatMessage[]> {
    const now = this.seconds();
    // One recursive query walks the chain (SQLite and PostgreSQL alike), newest first, each link the owner's and unexpired.
    const rows = await this.db.all<{
      id: string;
      previous_response_id: string | null;
      turn: string;
      depth: number | string;
    }>(
      `WITH RECURSIVE chain (id, previous_response_id, turn, depth) AS (
         SELECT id, previous_response_id, turn, 0 FROM gateway_responses WHERE id = ? AND owner = ? AND expires_at > ?
         UNION ALL
         SELECT r.id, r.previous_response_id, r.turn, chain.depth + 1 FROM gateway_responses r JOIN chain ON r.id = chain.previous_response_id
         WHERE r.owner = ? AND r.expires_at > ? AND chain.depth < ?
       )
       SELECT id, previous_response_id, turn, depth FROM chain ORDER BY depth`,
      [id, owner, now, owner, now, this.maxChain],
    );
    if (rows.length === 0) throw new NotFoundError(`Previous response with id '${id.slice(0, 64)}' not found.`);
    const oldest = rows.at(-1)!;
    if (oldest.previous_response_id !== null) {
      // The walk stopped early: a link is gone (deleted, expired, another owner's), or the chain is too long (or loops).
      if (rows.length > this.maxChain)
        throw new InvalidRequestError(
          `previous_response_id: the conversation is longer than ${this.maxChain} responses.`,
        );
      throw new NotFoundError(`Previous response with id '${oldest.previous_response_id.slice(0, 64)}' not found.`);
    }
    return rows.reverse().flatMap((row) => JSON.parse(row.turn) as ChatMessage[]);
  }
}
