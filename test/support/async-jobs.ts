import { expect } from 'vitest';

/** What the jobs endpoints answer: a job, or the error envelope. */
export interface JobAnswer {
  status: number;
  body: {
    id?: string;
    status?: string;
    result?: { choices: { message: { content: string } }[] } | null;
    error?: { code: string; message: string; type: string } | null;
  };
}

/** A JSON request to the gateway at `baseUrl` with `key`. */
export async function callJobs(baseUrl: string, key: string, path: string, init: RequestInit = {}): Promise<JobAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
  });
  return { status: res.status, body: (await res.json()) as JobAnswer['body'] };
}

/** Submits an asynchronous job and returns the whole answer (202 with the job, or an error). */
export function submitJob(baseUrl: string, key: string, model: string, text: string): Promise<JobAnswer> {
  return callJobs(baseUrl, key, '/v1/chat/completions/jobs', {
    method: 'POST',
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
  });
}

/** Reads a job, retrying the 503s of a gateway whose Redis connections are still coming back. */
export async function readJobOnceRedisAnswers(baseUrl: string, key: string, id: string): Promise<JobAnswer> {
  let answer: JobAnswer = { status: 0, body: {} };
  await expect
    .poll(
      async () => {
        answer = await callJobs(baseUrl, key, `/v1/chat/completions/jobs/${id}`);
        return answer.status;
      },
      { timeout: 15_000, interval: 100 },
    )
    .not.toBe(503);
  return answer;
}

/** Polls a job until it has `status`. */
export async function waitForJobStatus(baseUrl: string, key: string, id: string, status: string): Promise<void> {
  await expect
    .poll(async () => (await callJobs(baseUrl, key, `/v1/chat/completions/jobs/${id}`)).body.status, {
      timeout: 15_000,
    })
    .toBe(status);
}
