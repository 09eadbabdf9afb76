/** The `/v1/responses` and `/v1/embeddings` paths of the OpenAPI document; `json` and `errors` are the document's own helpers. */
export function responsesPaths(h: {
  json: (id: string) => unknown;
  errors: (...statuses: number[]) => Record<string, unknown>;
}): Record<string, unknown> {
  const { json, errors } = h;
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'The response id (`resp_...`).',
  };
  const tags = ['chat'];
  return {
    '/v1/responses': {
      post: {
        operationId: 'createResponse',
        tags,
        summary: "OpenAI's Responses API, for every model of every provider",
        description:
          'Translated to the canonical chat request (docs/responses.md). `stream: true` answers the Responses event stream (`response.created` ... `response.completed`, each with `sequence_number`). With `store` (default true) the response is kept for `RESPONSES_TTL`.',
        requestBody: { required: true, content: json('ResponseCreateRequest') },
        responses: {
          '200': {
            description: 'The response, or its event stream.',
            content: { ...(json('Response') as object), 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errors(400, 401, 403, 404, 413, 429, 502, 503, 504),
        },
      },
    },
    '/v1/responses/{id}': {
      parameters: [id],
      get: {
        operationId: 'retrieveResponse',
        tags,
        summary: 'Retrieve a stored response',
        responses: {
          '200': { description: 'The response.', content: json('Response') },
          ...errors(401, 404, 429, 503),
        },
      },
      delete: {
        operationId: 'deleteResponse',
        tags,
        summary: 'Delete a stored response',
        responses: {
          '200': { description: 'Deleted.', content: json('ResponseDeleted') },
          ...errors(401, 404, 429, 503),
        },
      },
    },
    '/v1/responses/{id}/input_items': {
      parameters: [id],
      get: {
        operationId: 'listResponseInputItems',
        tags,
        summary: "A stored response's input items",
        parameters: [
          {
            name: 'after',
            in: 'query',
            schema: { type: 'string' },
            description: 'The `last_id` of the previous page.',
          },
          { name: 'before', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'order', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' } },
        ],
        responses: {
          '200': { description: 'A page of input items.', content: json('ResponseInputItemList') },
          ...errors(400, 401, 404, 429, 503),
        },
      },
    },
    '/v1/embeddings': {
      post: {
        operationId: 'createEmbeddings',
        tags,
        summary: 'Embeddings of the embedding models of config.yaml (OpenAI- and Gemini-format providers)',
        requestBody: { required: true, content: json('EmbeddingsRequest') },
        responses: {
          '200': { description: 'The vectors, in input order.', content: json('EmbeddingList') },
          ...errors(400, 401, 403, 413, 429, 502, 503, 504),
        },
      },
    },
  };
}
