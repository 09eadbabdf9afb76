import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { BatchStore } from '../../batches/batch-store.ts';
import { describeIssues } from '../../chat/request-schema.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { disallowedModelLines } from '../../batches/batch-input.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { viewerOf } from './files.ts';
import { pageQuery } from './list-query.ts';

/** Endpoints a batch may run (the gateway serves chat completions only). */
const BATCH_ENDPOINTS = ['/v1/chat/completions'] as const;

/** Longest completion window accepted, seconds (OpenAI's is 24 h). */
const MAX_WINDOW_SECONDS = 7 * 86_400;

/** `POST /v1/batches` bodies: OpenAI's fields; `completion_window` may also be shorter than 24h (`90m`, `30s`). */
export const createBatchSchema = z.object({
  input_file_id: z.string().min(1).describe('Id of a file uploaded with purpose "batch".'),
  endpoint: z.enum(BATCH_ENDPOINTS).describe('The endpoint every line calls.'),
  completion_window: z
    .string()
    .regex(/^[1-9]\d{0,6}[smh]$/, 'must be a duration like "24h", "90m" or "30s"')
    .describe(
      'Time the batch has to finish, "24h" as at OpenAI; unanswered lines then end in the error file with batch_expired.',
    ),
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 pairs')
    .nullish()
    .describe('Up to 16 string pairs kept with the batch.'),
  output_expires_after: z.unknown().optional().describe('Accepted and ignored: output files are kept until deleted.'),
});

function windowSeconds(window: string): number {
  const value = Number(window.slice(0, -1));
  const seconds = value * { s: 1, m: 60, h: 3_600 }[window.at(-1) as 's' | 'm' | 'h'];
  if (seconds > MAX_WINDOW_SECONDS)
    throw new InvalidRequestError(`completion_window: at most ${MAX_WINDOW_SECONDS / 3_600}h.`);
  return seconds;
}

/**
 * OpenAI's Batch API over the gateway's queues: `POST /v1/batches`,
 * `GET /v1/batches`, `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`.
 * The batch runner (`src/batches/batch-runner.ts`) does the work.
 */
export function batchesRouter(deps: { store: BatchStore }): Router {
  const router = Router();

  router.post('/v1/batches', async (req: Request, res: Response) => {
    const parsed = createBatchSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
    const body = parsed.data;
    const seconds = windowSeconds(body.completion_window);
    const viewer = viewerOf(res);
    const file = await deps.store.file(body.input_file_id, viewer);
    if (file.purpose !== 'batch')
      throw new InvalidRequestError(`input_file_id: '${file.id}' was not uploaded with purpose "batch".`);
    // The runner validates later without the key; a key restricted to some models is checked now.
    const principal = contextOf(res).principal;
    const errors = principal?.policy?.allowed_models
      ? await disallowedModelLines(await deps.store.fileContent(file.id, viewer), (model) =>
          principal.mayUseModel(model),
        )
      : [];
    res.json(
      await deps.store.createBatch({
        owner: viewer.owner,
        keyId: principal?.keyId,
        inputFileId: file.id,
        endpoint: body.endpoint,
        completionWindow: body.completion_window,
        windowSeconds: seconds,
        metadata: body.metadata ?? null,
        errors,
      }),
    );
  });

  router.get('/v1/batches', async (req: Request, res: Response) => {
    res.json(await deps.store.listBatches(viewerOf(res), pageQuery(req, { defaultLimit: 20, maxLimit: 100 })));
  });

  router.get('/v1/batches/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.batch(req.params.id, viewerOf(res)));
  });

  router.post('/v1/batches/:id/cancel', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.requestCancel(req.params.id, viewerOf(res)));
  });

  return router;
}
