import type OpenAI from 'openai';
import { toFile } from 'openai';
import type { FakeUpstream, ProviderLetter } from './fake-upstream.ts';
import type { Gateway } from './processes.ts';
import type { Untyped } from './untyped.ts';

/** A model of each default provider, one per wire format. */
export const TRIO_MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' } as const;

/** config.yaml with provider_a/b/c in front of the fake upstream trio, each with `fields` (timeouts, concurrency). */
export function trioConfig(upstreams: Record<ProviderLetter, FakeUpstream>, fields: Record<string, unknown>): unknown {
  const letters: ProviderLetter[] = ['a', 'b', 'c'];
  return {
    providers: letters.map((l) => ({
      name: `provider_${l}`,
      api_key_env: `PROVIDER_${l.toUpperCase()}_API_KEY`,
      base_url: upstreams[l].url,
      models: [TRIO_MODELS[l]],
      ...fields,
    })),
  };
}

/** One line of a batch input file for `/v1/chat/completions`. */
export function batchLine(customId: string, model: string, text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: text }], ...extra },
  });
}

/** Uploads JSONL lines with the SDK (`files.create` with `toFile`) and creates a batch over them. */
export async function submitBatch(
  client: OpenAI,
  lines: readonly string[],
  options: { window?: string; metadata?: Record<string, string> } = {},
): Promise<OpenAI.Batch> {
  const file = await client.files.create({
    file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'batch.jsonl'),
    purpose: 'batch',
  });
  return client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: (options.window ?? '24h') as '24h',
    ...(options.metadata ? { metadata: options.metadata } : {}),
  });
}

const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Polls `batches.retrieve` until the batch reaches a final status (or `until`). */
export async function pollBatch(
  client: OpenAI,
  id: string,
  timeoutMs: number,
  until: (b: OpenAI.Batch) => boolean = (b) => FINAL.has(b.status),
): Promise<OpenAI.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (until(batch)) return batch;
    if (Date.now() > deadline)
      throw new Error(
        `batch ${id} still ${batch.status} after ${timeoutMs} ms: ${JSON.stringify(batch.request_counts)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An output or error file, downloaded with `files.content`, as parsed lines. */
export async function readOutput(
  client: OpenAI,
  fileId: string | null | undefined,
): Promise<
  Array<{
    id: string;
    custom_id: string;
    response: { status_code: number; request_id: string; body: Untyped } | null;
    error: { code: string; message: string } | null;
  }>
> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** How many times each prompt text reached the upstreams (the fake records every request). */
export function upstreamCallsByText(upstreams: readonly FakeUpstream[]): Map<string, number> {
  const calls = new Map<string, number>();
  for (const upstream of upstreams) {
    for (const request of upstream.requests) {
      const text = JSON.stringify(request.body);
      const match = /line-[\w-]+/.exec(text);
      if (match) calls.set(match[0], (calls.get(match[0]) ?? 0) + 1);
    }
  }
  return calls;
}

/** SIGKILLs the API and every worker of `gateway` (a crash of everything but Redis and the database). */
export async function killAll(gateway: Gateway): Promise<void> {
  await Promise.all([gateway.api, ...[...gateway.workers.values()].flat()].map((p) => p.kill('SIGKILL')));
}
