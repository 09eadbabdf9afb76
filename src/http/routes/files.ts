import { isUtf8 } from 'node:buffer';
import { Router, type Request, type Response } from 'express';
import type { Viewer } from '../../batches/batch-rows.ts';
import type { BatchStore } from '../../batches/batch-store.ts';
import { InvalidRequestError, RateLimitExceededError, RequestTooLargeError } from '../../errors/catalog.ts';
import { readMultipart } from '../multipart.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { pageQuery } from './list-query.ts';

/** Dependencies of the files routes. */
export interface FilesDeps {
  store: BatchStore;
  /** Largest file accepted, bytes (`BATCH_MAX_FILE_BYTES`). */
  maxFileBytes: number;
  /** Uploads read at once by this process (`FILES_MAX_CONCURRENT_UPLOADS`): each is held in memory while it is read. @defaultValue no cap */
  maxConcurrentUploads?: number;
  /** Bytes of uploaded files one owner may keep (`FILES_MAX_BYTES_PER_OWNER`). @defaultValue no quota */
  quotaBytes?: number;
  /** Longest filename, characters (`FILES_MAX_FILENAME_LENGTH`). @defaultValue 255 */
  maxFilenameLength?: number;
}

/** Room for the multipart framing around the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** The `file` part of an upload as text, checked: purpose, size, filename length, UTF-8. */
async function readUpload(
  req: Request,
  maxFileBytes: number,
  maxFilenameLength: number,
): Promise<{ filename: string; content: string; bytes: number }> {
  const form = await readMultipart(req, maxFileBytes + FORM_OVERHEAD_BYTES);
  const purpose = form.fields.get('purpose');
  if (purpose !== 'batch')
    throw new InvalidRequestError(
      `purpose: the gateway stores files for batches only; send purpose "batch"${purpose === undefined ? '' : `, not "${purpose.slice(0, 40)}"`}.`,
    );
  const file = form.files.get('file');
  if (!file) throw new InvalidRequestError('file: the multipart body has no "file" part.');
  if (file.data.length > maxFileBytes) throw new RequestTooLargeError(maxFileBytes);
  if (file.filename.length > maxFilenameLength)
    throw new InvalidRequestError(
      `file: the filename is ${file.filename.length} characters long; at most ${maxFilenameLength} are accepted (FILES_MAX_FILENAME_LENGTH).`,
    );
  if (!isUtf8(file.data)) throw new InvalidRequestError('file: a batch input file must be UTF-8 JSONL.');
  return { filename: file.filename || 'upload.jsonl', content: file.data.toString('utf8'), bytes: file.data.length };
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
    // Each upload is held whole while it is read: the cap bounds what uploads can take of the process's memory.
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
      // The request's bytes are unreachable once read, so they can go while the text is stored.
      const upload = await readUpload(req, deps.maxFileBytes, maxFilenameLength);
      res.json(
        await deps.store.createFile({
          owner: viewerOf(res).owner,
          purpose: 'batch',
          ...upload,
          ...(deps.quotaBytes !== undefined ? { quotaBytes: deps.quotaBytes } : {}),
        }),
      );
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
    res.status(200).type('application/jsonl').send(content);
  });

  router.delete('/v1/files/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.deleteFile(req.params.id, viewerOf(res)));
  });

  return router;
}
