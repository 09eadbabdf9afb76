import { readFileSync } from 'node:fs';
import { startGateway } from '../test/support/processes.ts';
import { uniquePrefix } from '../test/support/redis.ts';

/**
 * What uploads cost the API process's memory: four simultaneous uploads of a
 * 45 MiB batch file (`POST /v1/files`), with FILES_MAX_CONCURRENT_UPLOADS at
 * its default (4) and at 1 (the other three get 429); the API's resident
 * memory before and at its peak (`VmHWM`) after the uploads, and after the
 * stored files were read back at once (`GET /v1/files/{id}/content`), each
 * case on a fresh API process.
 * Linux only (reads /proc).
 *
 * BENCH_SMOKE=1: 5 MiB files.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const FILE_MIB = smoke ? 5 : 45;
const KEY = 'gw_bench_upload_memory_key_0123456789';

async function run(cap: number | undefined): Promise<string> {
  const gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: uniquePrefix('bench-upload'),
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'x',
      RATE_LIMIT_REQUESTS: '100000',
      SEMANTIC_CACHE_ENABLED: 'false',
      LOG_LEVEL: 'error',
      ...(cap !== undefined ? { FILES_MAX_CONCURRENT_UPLOADS: String(cap) } : {}),
    },
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: 'http://127.0.0.1:9/v1', models: ['a-4o'] },
      ],
    },
    providers: [],
  });
  try {
    const mib = (field: string) =>
      Number(
        new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${gateway.api.child.pid}/status`, 'utf8'))?.[1],
      ) / 1024;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const before = mib('VmRSS');
    const line = `${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'a-4o', messages: [{ role: 'user', content: 'y'.repeat(900) }] } })}\n`;
    const body = Buffer.from(line.repeat(Math.floor((FILE_MIB * 1024 * 1024) / line.length)));
    const replies = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const form = new FormData();
        form.set('purpose', 'batch');
        form.set('file', new Blob([body]), `f${i}.jsonl`);
        const reply = await fetch(`${gateway.baseUrl}/v1/files`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}` },
          body: form,
        });
        return { status: reply.status, id: reply.ok ? ((await reply.json()) as { id: string }).id : undefined };
      }),
    );
    const stored = replies.filter((r) => r.status === 200).length;
    const peak = mib('VmHWM');
    // Then the four (or one) stored files read back at once.
    const read = await Promise.all(
      replies.map(async ({ id }) => {
        if (id === undefined) return 0;
        const reply = await fetch(`${gateway.baseUrl}/v1/files/${id}/content`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        return (await reply.arrayBuffer()).byteLength;
      }),
    );
    if (read.some((bytes, i) => replies[i]!.id !== undefined && bytes !== body.length))
      throw new Error('a file read back differs in length from its upload');
    return `| ${cap ?? '4 (default)'} | ${stored} | ${replies.length - stored} | ${before.toFixed(0)} | ${peak.toFixed(0)} | ${mib('VmHWM').toFixed(0)} |`;
  } finally {
    await gateway.stop();
  }
}

const rows = [await run(undefined), await run(1)];
process.stdout.write(
  `Four simultaneous ${FILE_MIB} MiB uploads:\n\n| FILES_MAX_CONCURRENT_UPLOADS | stored | refused (429) | API RSS before, MiB | API peak RSS after uploads, MiB | API peak RSS after reading them back, MiB |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
