import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startHttpProxy, type HttpProxy } from '../support/http-proxy.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { selfSignedCert } from '../support/self-signed-cert.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Upstream calls through a corporate proxy: HTTPS_PROXY (a CONNECT tunnel,
 * TLS end to end), HTTP_PROXY (an absolute-URL request) and NO_PROXY, with a
 * loopback proxy, a TLS upstream whose certificate the worker trusts, and the
 * real API and worker processes.
 */

const KEY = 'gw_e2e_proxy_key_0123456789';
const prefix = uniquePrefix('proxy');
const redis = testRedis();
const certificate = selfSignedCert();
let proxy: HttpProxy;
let secure: FakeUpstream;
let plain: FakeUpstream;
let direct: FakeUpstream;
let gateway: Gateway;
let client: OpenAI;

beforeAll(async () => {
  // The worker trusts the upstream's certificate through NODE_EXTRA_CA_CERTS.
  const tls = { key: certificate.key, cert: certificate.cert };
  proxy = await startHttpProxy();
  secure = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-tls-secret', tls });
  plain = await startFakeUpstream({ format: 'anthropic', apiKey: 'upstream-plain-secret' });
  direct = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-direct-secret' });
  const proxyWithCredentials = proxy.url.replace('http://', 'http://corp-user:corp%20pass@');
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      SEMANTIC_CACHE_ENABLED: 'false',
      CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      PROVIDER_A_API_KEY: 'upstream-tls-secret',
      PROVIDER_C_API_KEY: 'upstream-plain-secret',
      PROVIDER_D_API_KEY: 'upstream-direct-secret',
      HTTPS_PROXY: proxyWithCredentials,
      HTTP_PROXY: proxy.url,
      // Reached as "localhost": directly, past the proxy.
      NO_PROXY: 'example.internal,localhost',
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: secure.url,
          models: ['a-4o'],
          max_retries: 0,
        },
        {
          name: 'provider_c',
          api_key_env: 'PROVIDER_C_API_KEY',
          base_url: plain.url,
          models: ['c-sonnet-4'],
          max_retries: 0,
        },
        {
          name: 'provider_d',
          format: 'openai',
          api_key_env: 'PROVIDER_D_API_KEY',
          base_url: direct.url.replace('127.0.0.1', 'localhost'),
          models: ['d-direct'],
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_a', 'provider_c', 'provider_d'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([proxy?.close(), secure?.close(), plain?.close(), direct?.close()]);
  await deletePrefix(redis, prefix);
  redis.disconnect();
  certificate.remove();
});

describe('upstream calls through a proxy', () => {
  it('tunnels https upstreams with CONNECT and the proxy credentials; the proxy never sees the upstream key', async () => {
    const reply = await client.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'through the tunnel' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Echo: through the tunnel');
    const port = new URL(secure.url).port;
    expect(proxy.connects.map((c) => c.target)).toContain(`127.0.0.1:${port}`);
    expect(proxy.connects[0]?.authorization).toBe(`Basic ${Buffer.from('corp-user:corp pass').toString('base64')}`);
    expect(secure.requests.at(-1)?.headers.authorization).toBe('Bearer upstream-tls-secret');
    expect(JSON.stringify(proxy.forwarded)).not.toContain('upstream-tls-secret');
  });

  it('streams through the tunnel as well', async () => {
    const stream = await client.chat.completions.create({
      model: 'a-4o',
      stream: true,
      messages: [{ role: 'user', content: 'streamed through' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Echo: streamed through');
  });

  it('forwards http upstreams as absolute-URL requests to the proxy', async () => {
    const reply = await client.chat.completions.create({
      model: 'c-sonnet-4',
      messages: [{ role: 'user', content: 'forwarded' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Echo: forwarded');
    expect(proxy.forwarded.map((f) => f.url)).toContain(`${plain.url}/v1/messages`);
  });

  it('calls NO_PROXY hosts directly', async () => {
    const before = proxy.connects.length + proxy.forwarded.length;
    const reply = await client.chat.completions.create({
      model: 'd-direct',
      messages: [{ role: 'user', content: 'no proxy' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Echo: no proxy');
    expect(direct.requests).toHaveLength(1);
    expect(proxy.connects.length + proxy.forwarded.length).toBe(before);
  });
});
