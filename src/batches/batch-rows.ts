import type { BatchErrorItem, BatchObject, BatchStatus, FileObject, FilePurpose } from './batch-objects.ts';

/** Rows of the batch tables as the drivers return them (PostgreSQL's BIGINT as text), and the objects clients see. */

/** Who asks: an owner sees its own files and batches, an admin key everyone's. */
export interface Viewer {
  owner: string;
  admin: boolean;
}

export type BatchRow = Record<keyof Omit<BatchObject, 'object' | 'errors' | 'metadata' | 'request_counts'>, unknown> & {
  owner: string;
  errors: string | null;
  metadata: string | null;
  /** `batch`, or `job` for an asynchronous job (never shown as a batch). */
  kind?: string;
};

/** What the runner needs of a batch row. */
export interface BatchState {
  status: BatchStatus;
  owner: string;
  input_file_id: string;
  expires_at: number;
  /** `job`: an asynchronous job, a one-line batch finished by `JobRows` rather than into files. */
  kind: 'batch' | 'job';
  /** BullMQ priority of its lines. @defaultValue PRIORITIES.batch */
  priority: number | undefined;
  /** The issued key it was created with; undefined for a static key. */
  keyId: string | undefined;
}

export interface FileRow {
  id: string;
  owner: string;
  purpose: string;
  filename: string;
  bytes: unknown;
  created_at: unknown;
  batch_id: string | null;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function batchView(row: BatchRow, counts: BatchObject['request_counts']): BatchObject {
  const errors = row.errors ? (JSON.parse(row.errors) as BatchErrorItem[]) : null;
  return {
    id: String(row.id),
    object: 'batch',
    endpoint: String(row.endpoint),
    errors: errors ? { object: 'list', data: errors } : null,
    input_file_id: String(row.input_file_id),
    completion_window: String(row.completion_window),
    status: row.status as BatchStatus,
    output_file_id: (row.output_file_id as string | null) ?? null,
    error_file_id: (row.error_file_id as string | null) ?? null,
    created_at: Number(row.created_at),
    in_progress_at: num(row.in_progress_at),
    expires_at: Number(row.expires_at),
    finalizing_at: num(row.finalizing_at),
    completed_at: num(row.completed_at),
    failed_at: num(row.failed_at),
    expired_at: num(row.expired_at),
    cancelling_at: num(row.cancelling_at),
    cancelled_at: num(row.cancelled_at),
    request_counts: counts,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
  };
}

export function visible(owner: string, viewer: Viewer): boolean {
  return viewer.admin || owner === viewer.owner;
}

/** A file as the API shows it; an uploaded one expires `ttlSeconds` after its upload (0: never), output files live with their batch. */
export function fileView(row: FileRow, ttlSeconds = 0): FileObject {
  return {
    id: row.id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Number(row.created_at),
    expires_at: ttlSeconds > 0 && row.batch_id === null ? Number(row.created_at) + ttlSeconds : null,
    filename: row.filename,
    purpose: row.purpose as FilePurpose,
    status: 'processed',
    status_details: null,
  };
}
