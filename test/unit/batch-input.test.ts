import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { disallowedModelLines, validateBatchInput, type BatchInputRules } from '../../src/batches/batch-input.ts';
import { ModelNotFoundError } from '../../src/errors/catalog.ts';
import { MultipartReader, multipartBoundary } from '../../src/http/multipart.ts';
import { batchLine } from '../support/batches.ts';

/** The up-front check of batch input files, and the multipart reader of uploads. */

const rules: BatchInputRules = {
  endpoint: '/v1/chat/completions',
  maxLines: 5,
  maxLineBytes: 600,
  check: (request) => {
    if (request.model !== 'a-4o') throw new ModelNotFoundError(request.model);
  },
};

describe('disallowedModelLines', () => {
  it('names each line whose model the key may not call, and leaves unparsable lines to validation', async () => {
    const content = [
      batchLine('a', 'a-4o', 'hi'),
      batchLine('b', 'c-opus', 'hi'),
      '{not json',
      '',
      batchLine('c', 'c-opus', 'again'),
    ].join('\n');
    const errors = await disallowedModelLines(content, (model) => model.startsWith('a-'));
    expect(errors).toEqual([
      { code: 'model_not_allowed', message: "This key may not use the model 'c-opus'.", param: 'body.model', line: 2 },
      { code: 'model_not_allowed', message: "This key may not use the model 'c-opus'.", param: 'body.model', line: 5 },
    ]);
    expect(await disallowedModelLines(content, () => true)).toEqual([]);
  });
});

describe('validateBatchInput', () => {
  it('accepts good lines, skipping blank ones, and keeps each body as JSON text', async () => {
    const result = await validateBatchInput(
      `${batchLine('x', 'a-4o', 'hi')}\n\n${batchLine('y', 'a-4o', 'there', { temperature: 0 })}\r\n`,
      rules,
    );
    expect(result).toEqual({
      lines: [
        { customId: 'x', body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'hi' }] }) },
        {
          customId: 'y',
          body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'there' }], temperature: 0 }),
        },
      ],
    });
  });

  it('names every bad line with its 1-based number and a code', async () => {
    const content = [
      batchLine('ok', 'a-4o', 'fine'),
      'not json',
      '[1, 2]',
      JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: {} }),
      batchLine('ok', 'a-4o', 'again'),
    ].join('\n');
    const result = await validateBatchInput(content, rules);
    expect('errors' in result && result.errors.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, 'invalid_json_line', null],
      [3, 'invalid_json_line', null],
      [4, 'missing_required_parameter', 'custom_id'],
      [5, 'duplicate_custom_id', 'custom_id'],
    ]);
  });

  it('refuses a wrong method or url, an invalid body, a streamed one, a model the key cannot use and an oversized line', async () => {
    const content = [
      JSON.stringify({ custom_id: 'm', method: 'GET', url: '/v1/chat/completions', body: {} }),
      JSON.stringify({ custom_id: 'u', method: 'POST', url: '/v1/responses', body: {} }),
      JSON.stringify({
        custom_id: 'b',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'a-4o', messages: [] },
      }),
      batchLine('s', 'a-4o', 'x', { stream: true }),
      batchLine('k', 'other-model', 'x'),
    ].join('\n');
    const result = await validateBatchInput(content, { ...rules, maxLines: 10 });
    expect('errors' in result && result.errors.map((e) => [e.line, e.code])).toEqual([
      [1, 'invalid_method'],
      [2, 'mismatched_endpoint'],
      [3, 'invalid_request'],
      [4, 'invalid_request'],
      [5, 'model_not_found'],
    ]);
    const big = await validateBatchInput(batchLine('big', 'a-4o', 'x'.repeat(700)), rules);
    expect('errors' in big && big.errors[0]).toMatchObject({ line: 1, code: 'request_too_large' });
  });

  it('refuses more lines than allowed, and a file without any', async () => {
    const many = Array.from({ length: 6 }, (_, i) => batchLine(`n${i}`, 'a-4o', 'x')).join('\n');
    expect(await validateBatchInput(many, rules)).toEqual({
      errors: [expect.objectContaining({ code: 'too_many_requests_in_file', line: 6 })],
    });
    expect(await validateBatchInput('\n \n', rules)).toEqual({
      errors: [expect.objectContaining({ code: 'empty_file', line: null })],
    });
  });
});

function request(body: Buffer | string, contentType: string): IncomingMessage {
  const stream = Readable.from([Buffer.from(body)]) as unknown as IncomingMessage;
  stream.headers = { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) };
  return stream;
}

/** Every event of `body` fed to a reader `step` bytes at a time, data joined per part. */
function parse(body: Buffer, marker: string, step: number) {
  const reader = new MultipartReader(marker);
  const parts: { name: string | undefined; filename: string | undefined; data: Buffer }[] = [];
  let ended = false;
  for (let at = 0; at < body.length; at += step)
    for (const event of reader.push(body.subarray(at, at + step))) {
      if (event.kind === 'part') parts.push({ name: event.name, filename: event.filename, data: Buffer.alloc(0) });
      else if (event.kind === 'data') parts.at(-1)!.data = Buffer.concat([parts.at(-1)!.data, event.data]);
      else ended = true;
    }
  reader.finish();
  return { parts, ended };
}

describe('MultipartReader', () => {
  it('reads fields and files as fetch sends them, however the bytes are split', async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    const content = '{"a":1}\r\n{"b":"é"}\n--not-the-boundary\r\n-';
    form.append('file', new Blob([content]), 'in.jsonl');
    const built = new Response(form);
    const body = Buffer.from(await built.arrayBuffer());
    const marker = multipartBoundary(request(body, built.headers.get('content-type')!), 10_000);
    for (const step of [1, 2, 7, 64, body.length]) {
      const { parts, ended } = parse(body, marker, step);
      expect(ended).toBe(true);
      expect(parts.map((p) => [p.name, p.filename, p.data.toString('utf8')])).toEqual([
        ['purpose', undefined, 'batch'],
        ['file', 'in.jsonl', content],
      ]);
    }
  });

  it('refuses a body over the limit, a missing boundary and a cut body', () => {
    const body = '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--b--\r\n';
    expect(() => multipartBoundary(request(body, 'multipart/form-data; boundary=b'), 10)).toThrow(
      expect.objectContaining({ code: 'request_too_large' }),
    );
    expect(() => multipartBoundary(request(body, 'application/json'), 10_000)).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    expect(() => parse(Buffer.from(body.slice(0, 40)), 'b', 5)).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    expect(multipartBoundary(request(body, 'multipart/form-data; boundary="b"'), 10_000)).toBe('b');
    expect(parse(Buffer.from(body), 'b', 3).parts[0]?.data.toString()).toBe('batch');
  });
});
