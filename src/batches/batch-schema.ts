/**
 * Tables of the Batch API (files, batches and one row per request line), in
 * the key-store database. They have their own migration track
 * (`gateway_batch_schema_migrations`), so they evolve apart from the keys'.
 *
 * Times are epoch seconds, except `lease_until` (epoch ms). Input files keep
 * their content (in `gateway_file_chunks` since version 6); output and error
 * files are rendered from the lines.
 */
export interface BatchMigration {
  version: number;
  description: string;
  sql: string;
}

const TABLES = `
  CREATE TABLE gateway_files (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    purpose TEXT NOT NULL,
    filename TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    batch_id TEXT,
    content TEXT
  );
  CREATE INDEX gateway_files_owner ON gateway_files (owner, id);
  CREATE TABLE gateway_batches (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    input_file_id TEXT NOT NULL,
    completion_window TEXT NOT NULL,
    status TEXT NOT NULL,
    output_file_id TEXT,
    error_file_id TEXT,
    errors TEXT,
    metadata TEXT,
    created_at BIGINT NOT NULL,
    in_progress_at BIGINT,
    expires_at BIGINT NOT NULL,
    finalizing_at BIGINT,
    completed_at BIGINT,
    failed_at BIGINT,
    expired_at BIGINT,
    cancelling_at BIGINT,
    cancelled_at BIGINT,
    lease_owner TEXT,
    lease_until BIGINT
  );
  CREATE INDEX gateway_batches_owner ON gateway_batches (owner, id);
  CREATE INDEX gateway_batches_status ON gateway_batches (status);
  CREATE TABLE gateway_batch_lines (
    batch_id TEXT NOT NULL,
    line_index INTEGER NOT NULL,
    custom_id TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    job_id TEXT,
    output TEXT,
    PRIMARY KEY (batch_id, line_index)
  );
  CREATE INDEX gateway_batch_lines_status ON gateway_batch_lines (batch_id, status);`;

/**
 * Asynchronous jobs (`/v1/chat/completions/jobs`) are one-line rows of the
 * same tables (`kind = 'job'`, hidden from `/v1/batches`), run by the same
 * runner at their own `priority`; `retain_seconds` is how long a job is kept
 * after its last change (`ASYNC_JOB_TTL` when it was created).
 */
const JOBS = `
  ALTER TABLE gateway_batches ADD COLUMN kind TEXT NOT NULL DEFAULT 'batch';
  ALTER TABLE gateway_batches ADD COLUMN priority INTEGER;
  ALTER TABLE gateway_batches ADD COLUMN retain_seconds BIGINT;
  CREATE INDEX gateway_batches_kind ON gateway_batches (kind, owner, id);
  CREATE INDEX gateway_batches_expiry ON gateway_batches (kind, expires_at);`;

/**
 * The issued key a batch or job was created with (its public id, never the
 * key): its lines run under that key's model list, token limit, budget and
 * semantic-cache switch. NULL for the static API_KEYS, which have none.
 */
const KEY_IDS = `ALTER TABLE gateway_batches ADD COLUMN key_id TEXT;`;

/**
 * Stored responses of the Responses door (src/doors/responses/response-store.ts):
 * the response object, its input items and the canonical messages of its
 * turn (input and reply) that a later `previous_response_id` replays, kept
 * until `expires_at` (`RESPONSES_TTL` after creation).
 */
const RESPONSES = `
  CREATE TABLE gateway_responses (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    previous_response_id TEXT,
    response TEXT NOT NULL,
    input_items TEXT NOT NULL,
    turn TEXT NOT NULL
  );
  CREATE INDEX gateway_responses_expiry ON gateway_responses (expires_at);`;

/**
 * Responses kept by a native Responses upstream (`responses_api: native`):
 * the upstream holds the response, the gateway only whose it is (the key
 * owner), which provider made it and the model the client named, so that
 * retrieve, delete, input_items and `previous_response_id` of another key's
 * id are a 404.
 */
const NATIVE_RESPONSES = `
  CREATE TABLE gateway_native_responses (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX gateway_native_responses_expiry ON gateway_native_responses (expires_at);`;

/**
 * Uploaded files in chunks of about 1 MiB of UTF-8 text (`seq` from 0), so an
 * upload is stored and read back without holding it whole; the content of
 * files uploaded before moves into one chunk each. `created_at` (epoch
 * seconds) lets chunks of an upload that never finished be purged.
 */
const FILE_CHUNKS = `
  CREATE TABLE gateway_file_chunks (
    file_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (file_id, seq)
  );
  INSERT INTO gateway_file_chunks (file_id, seq, data, created_at)
    SELECT id, 0, content, created_at FROM gateway_files WHERE content IS NOT NULL AND content <> '';
  UPDATE gateway_files SET content = NULL;`;

export const BATCH_MIGRATIONS: readonly BatchMigration[] = [
  { version: 1, description: 'files, batches and batch lines', sql: TABLES },
  { version: 2, description: 'asynchronous jobs as one-line batches', sql: JOBS },
  { version: 3, description: 'the issued key of a batch or job', sql: KEY_IDS },
  { version: 4, description: 'stored responses of the Responses door', sql: RESPONSES },
  { version: 5, description: "the owners of a native Responses upstream's responses", sql: NATIVE_RESPONSES },
  { version: 6, description: 'uploaded files stored in chunks', sql: FILE_CHUNKS },
];

export const LATEST_BATCH_SCHEMA_VERSION = Math.max(...BATCH_MIGRATIONS.map((m) => m.version));
