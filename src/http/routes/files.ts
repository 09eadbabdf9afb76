import { once } from 'node:events';
import { Router, type Request, type Response } from 'express';
import type { Viewer } from '../../batches/batch-rows.ts';
import type { BatchStore } from '../../batches/batch-store.ts';
import { InvalidRequestError, RateLimitExceededError, RequestTooLargeError } from '../../errors/catalog.ts';
import { MultipartReader, multipartBoundary } from '../multipart.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { pageQuery } from './list-query.ts';

/** Dependencies of the files routes. */
export interface FilesDeps {
  store: BatchStore;
  /** Largest file accepted, bytes (`BATCH_MAX_FILE_BYTES`). */
  maxFileBytes: number;
  /** Uploads read at once by this process (`FILES_MAX_CONCURRENT_UPLOADS`): each holds up to a 1 MiB chunk while it is read. @defaultValue no cap */
  maxConcurrentUploads?: number;
  /** Bytes of uploaded files one owner may keep (`FILES_MAX_BYTES_PER_OWNER`). @defaultValue no quota */
  quotaBytes?: number;
  /** Longest filename, characters (`FILES_MAX_FILENAME_LENGTH`). @defaultValue 255 */
  maxFilenameLength?: number;
}

/** Room for the multipart framing around the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** How long a refused upload's client may go on sending after its answer. */
const DRAIN_MS = 2000;

/** Longest text field read from an upload's form (`purpose`). */
const MAX_FIELD_BYTES = 4096;

/**
 * Reads an upload as it arrives and stores its `file` part chunk by chunk
 * (the request is not read further while a chunk is written), checking
 * purpose, size, filename length, UTF-8 and the owner's quota on the way.
 * Whatever went wrong, the chunks written so far are removed.
 */
async function receiveUpload(req: Request, res: Response, deps: FilesDeps, owner: string, maxFilenameLength: number) {
  const limit = deps.maxFileBytes + FORM_OVERHEAD_BYTES;
  const reader = new MultipartReader(multipartBoundary(req, limit));
  const upload = await deps.store.openUpload(owner, deps.quotaBytes);
  const fields = new Map<string, string>();
  let filename: string | undefined;
  let part: { name: string | undefined; filename: string | undefined } | undefined;
  let received = 0;
  try {
    // Leaving the loop early (a refusal) must not destroy the request: the catch below drains the rest of the body
    // and closes the connection of a client still sending, which a destroyed request has no socket left for.
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > limit) throw new RequestTooLargeError(limit);
      for (const event of reader.push(chunk)) {
        if (event.kind === 'part') {
          part = event;
          if (event.name === 'file' && event.filename !== undefined) {
            if (filename !== undefined) throw new InvalidRequestError('file: the multipart body has two "file" parts.');
            if (event.filename.length > maxFilenameLength)
              throw new InvalidRequestError(
                `file: the filename is ${event.filename.length} characters long; at most ${maxFilenameLength} are accepted (FILES_MAX_FILENAME_LENGTH).`,
              );
            filename = event.filename;
          }
        } else if (event.kind === 'data' && part?.name !== undefined) {
          if (part.name === 'file' && part.filename !== undefined) {
            if (upload.bytes + event.data.length > deps.maxFileBytes) throw new RequestTooLargeError(deps.maxFileBytes);
            await upload.write(event.data);
          } else if (part.filename === undefined) {
            const text = (fields.get(part.name) ?? '') + event.data.toString('utf8');
            if (text.length > MAX_FIELD_BYTES) throw new InvalidRequestError(`${part.name}: the field is too long.`);
            fields.set(part.name, text);
          }
        }
      }
    }
    reader.finish();
    const purpose = fields.get('purpose');
    if (purpose !== 'batch')
      throw new InvalidRequestError(
        `purpose: the gateway stores files for batches only; send purpose "batch"${purpose === undefined ? '' : `, not "${purpose.slice(0, 40)}"`}.`,
      );
    if (filename === undefined) throw new InvalidRequestError('file: the multipart body has no "file" part.');
  } catch (err) {
    // The rest of the body is drained, not read, so the client can take the answer; one still sending a while
    // after it loses the connection (it would otherwise hold the process's graceful shutdown open).
    req.resume();
    res.once('finish', () => {
      if (!req.complete) setTimeout(() => req.complete || req.socket.destroy(), DRAIN_MS).unref();
    });
    // The client hears of its own mistake even if the chunks cannot be removed now (a purge takes them later).
    await upload.abort().catch(() => undefined);
    throw err;
  }
  return deps.store.createFile({
    owner,
    purpose: 'batch',
    filename: filename || 'upload.jsonl',
    content: upload,
    ...(deps.quotaBytes !== undefined ? { quotaBytes: deps.quotaBytes } : {}),
  });
}

/** Who asks: an admin key sees every owner's files and batches. */
export function viewerOf(res: Response): Viewer {
  const principal = contextOf(res).principal;
  return { owner: principal?.owner ?? 'anonymous', admin: principal?.admin ?? false };
}

/**
 * OpenAI's Files API, for batch input: `POST /v1/files` (multipart, `purpose`
 * `batch`), `GET /v1/files`, `GET /v1/files/{id}`, `GET /v1/files/{id}/content`,
 * `DELETE /v1/files/{id}`. Output and error files of batches are listed and
 * read the same way (`purpose: "batch_output"`).
 */
export function filesRouter(deps: FilesDeps): Router {
  const router = Router();

  const maxFilenameLength = deps.maxFilenameLength ?? 255;
  let uploading = 0;
  router.post('/v1/files', async (req: Request, res: Response) => {
    // Each upload holds up to a chunk in memory while it is read, and works the database per chunk.
    if (uploading >= (deps.maxConcurrentUploads ?? Infinity)) {
      req.resume();
      throw new RateLimitExceededError(
        1,
        {},
        `Uploads in progress on this server (FILES_MAX_CONCURRENT_UPLOADS, ${deps.maxConcurrentUploads})`,
      );
    }
    uploading += 1;
    try {
      res.json(await receiveUpload(req, res, deps, viewerOf(res).owner, maxFilenameLength));
    } finally {
      uploading -= 1;
    }
  });

  router.get('/v1/files', async (req: Request, res: Response) => {
    const page = pageQuery(req, { defaultLimit: 100, maxLimit: 10_000 });
    const purpose = typeof req.query.purpose === 'string' ? req.query.purpose : undefined;
    res.json(await deps.store.listFiles(viewerOf(res), { ...page, ...(purpose ? { purpose } : {}) }));
  });

  router.get('/v1/files/:id', async (req: Request<{ id: string }>, res: Response) => {
    const { batch_id: _batch, ...file } = await deps.store.file(req.params.id, viewerOf(res));
    res.json(file);
  });

  router.get('/v1/files/:id/content', async (req: Request<{ id: string }>, res: Response) => {
    const content = await deps.store.fileContent(req.params.id, viewerOf(res));
    res.status(200).type('application/jsonl');
    // Chunk by chunk, waiting for a slow reader rather than queueing the file in memory.
    for await (const piece of content) {
      if (res.destroyed) return;
      if (!res.write(piece)) await once(res, 'drain');
    }
    res.end();
  });

  router.delete('/v1/files/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.deleteFile(req.params.id, viewerOf(res)));
  });

  return router;
}
