/** The `/v1/files` and `/v1/batches` paths of the OpenAPI document; `json` and `errors` are the document's own helpers. */
export function batchPaths(h: {
  json: (id: string) => unknown;
  errors: (...statuses: number[]) => Record<string, unknown>;
}): Record<string, unknown> {
  const { json, errors } = h;
  const id = (what: string) => ({
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: `The ${what}'s id.`,
  });
  const page = (max: number, byDefault: number) => [
    { name: 'after', in: 'query', schema: { type: 'string' }, description: 'The `last_id` of the previous page.' },
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: max, default: byDefault } },
  ];
  const tags = ['batch'];
  return {
    '/v1/files': {
      post: {
        operationId: 'createFile',
        tags,
        summary: 'Upload a batch input file',
        description:
          'multipart/form-data with `purpose` = `batch` and a `file` part: JSONL, one `{custom_id, method: "POST", url: "/v1/chat/completions", body}` per line. At most BATCH_MAX_FILE_BYTES (413); a filename of at most FILES_MAX_FILENAME_LENGTH characters and the uploads of one owner within FILES_MAX_BYTES_PER_OWNER (400); at most FILES_MAX_CONCURRENT_UPLOADS uploads read at once per API process (429 with Retry-After). Deleted FILES_TTL after upload (expires_at).',
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file', 'purpose'],
                properties: {
                  file: { type: 'string', format: 'binary' },
                  purpose: { type: 'string', enum: ['batch'] },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'The stored file.', content: json('File') },
          ...errors(400, 401, 413, 429, 503),
        },
      },
      get: {
        operationId: 'listFiles',
        tags,
        summary: "List the caller's files (every file for an admin key)",
        parameters: [
          ...page(10_000, 100),
          { name: 'purpose', in: 'query', schema: { type: 'string', enum: ['batch', 'batch_output'] } },
        ],
        responses: {
          '200': { description: 'A page of files.', content: json('FileList') },
          ...errors(400, 401, 429, 503),
        },
      },
    },
    '/v1/files/{id}': {
      parameters: [id('file')],
      get: {
        operationId: 'retrieveFile',
        tags,
        summary: 'Retrieve a file',
        responses: { '200': { description: 'The file.', content: json('File') }, ...errors(401, 404, 429, 503) },
      },
      delete: {
        operationId: 'deleteFile',
        tags,
        summary: 'Delete a file',
        responses: { '200': { description: 'Deleted.', content: json('FileDeleted') }, ...errors(401, 404, 429, 503) },
      },
    },
    '/v1/files/{id}/content': {
      parameters: [id('file')],
      get: {
        operationId: 'retrieveFileContent',
        tags,
        summary: "A file's content",
        responses: {
          '200': { description: 'JSONL.', content: { 'application/jsonl': { schema: { type: 'string' } } } },
          ...errors(401, 404, 429, 503),
        },
      },
    },
    '/v1/batches': {
      post: {
        operationId: 'createBatch',
        tags,
        summary: 'Create a batch from an uploaded file',
        description: 'Answers at once with the batch in `validating`; the whole file is checked before any line runs.',
        requestBody: { required: true, content: json('BatchCreateRequest') },
        responses: { '200': { description: 'The batch.', content: json('Batch') }, ...errors(400, 401, 404, 429, 503) },
      },
      get: {
        operationId: 'listBatches',
        tags,
        summary: "List the caller's batches (every batch for an admin key)",
        parameters: page(100, 20),
        responses: {
          '200': { description: 'A page of batches.', content: json('BatchList') },
          ...errors(400, 401, 429, 503),
        },
      },
    },
    '/v1/batches/{id}': {
      parameters: [id('batch')],
      get: {
        operationId: 'retrieveBatch',
        tags,
        summary: 'Retrieve a batch',
        responses: { '200': { description: 'The batch.', content: json('Batch') }, ...errors(401, 404, 429, 503) },
      },
    },
    '/v1/batches/{id}/cancel': {
      parameters: [id('batch')],
      post: {
        operationId: 'cancelBatch',
        tags,
        summary: 'Cancel a batch',
        description:
          '`cancelling` until the lines in flight are stopped, then `cancelled`, with the answered lines in its output and error files.',
        responses: { '200': { description: 'The batch.', content: json('Batch') }, ...errors(400, 401, 404, 429, 503) },
      },
    },
  };
}
