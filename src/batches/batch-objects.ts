/**
 * The File and Batch objects of OpenAI's API, as the gateway answers them,
 * and the lines of output and error files. Shapes follow OpenAI's API
 * reference, so the official SDKs parse them unchanged.
 */

export type BatchStatus =
  'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** Statuses after which nothing more happens to a batch. */
export const FINAL_BATCH_STATUSES: ReadonlySet<BatchStatus> = new Set(['failed', 'completed', 'expired', 'cancelled']);

/** Purposes a client may upload; the gateway writes `batch_output` files itself. */
export type FilePurpose = 'batch' | 'batch_output';

export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  /** When an uploaded file is deleted (`FILES_TTL`); null for output files and with `FILES_TTL=0`. */
  expires_at: number | null;
  filename: string;
  purpose: FilePurpose;
  /** Deprecated by OpenAI, still sent: a stored file is always `processed`. */
  status: 'processed';
  status_details: null;
}

/** One entry of a batch's `errors.data`: `line` is 1-based in the input file. */
export interface BatchErrorItem {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: BatchErrorItem[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

/** One line of an output file (`response` set) or of an error file (`response` with an error body, or `error` when it never ran). */
export interface BatchOutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/** A page of a list endpoint, the cursor shape the SDKs page through with `after`. */
export interface ListPage<T extends { id: string }> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export function listPage<T extends { id: string }>(data: T[], hasMore: boolean): ListPage<T> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
