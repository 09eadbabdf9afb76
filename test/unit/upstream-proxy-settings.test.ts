import { describe, expect, it } from 'vitest';
import { proxyAuthorization, proxyFor, proxySettingsFrom } from '../../src/execution/upstream-proxy.ts';

describe('proxy settings', () => {
  it('reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY in either case, and nothing when none is set', () => {
    expect(proxySettingsFrom({})).toBeUndefined();
    const settings = proxySettingsFrom({
      https_proxy: 'proxy.corp:3128',
      HTTP_PROXY: 'http://web.corp:8080',
      NO_PROXY: ' .internal, localhost:8000 ,*.svc,10.0.0.5',
    });
    expect(settings?.https?.href).toBe('http://proxy.corp:3128/');
    expect(settings?.http?.href).toBe('http://web.corp:8080/');
    expect(settings?.noProxy).toEqual(['.internal', 'localhost:8000', '*.svc', '10.0.0.5']);
    expect(() => proxySettingsFrom({ HTTPS_PROXY: 'http://user:secret@[bad' })).toThrowError(/not a URL/);
    expect(() => proxySettingsFrom({ HTTPS_PROXY: 'http://user:secret@[bad' })).not.toThrowError(/secret/);
  });

  it('picks the proxy by scheme and lets NO_PROXY hosts, domains and ports go directly', () => {
    const settings = proxySettingsFrom({
      HTTPS_PROXY: 'http://p:1',
      NO_PROXY: '.internal,localhost:8000,*.svc,10.0.0.5',
    })!;
    expect(proxyFor(settings, new URL('https://api.openai.com/v1'))?.host).toBe('p:1');
    // No HTTP_PROXY: http upstreams go directly.
    expect(proxyFor(settings, new URL('http://api.openai.com/v1'))).toBeUndefined();
    expect(proxyFor(settings, new URL('https://llm.internal/v1'))).toBeUndefined();
    expect(proxyFor(settings, new URL('https://a.b.internal/v1'))).toBeUndefined();
    expect(proxyFor(settings, new URL('https://internal.example/v1'))?.host).toBe('p:1');
    expect(proxyFor(settings, new URL('https://localhost:8000/v1'))).toBeUndefined();
    expect(proxyFor(settings, new URL('https://localhost:9000/v1'))?.host).toBe('p:1');
    expect(proxyFor(settings, new URL('https://gw.svc/v1'))).toBeUndefined();
    expect(proxyFor(settings, new URL('https://10.0.0.5/v1'))).toBeUndefined();
    expect(
      proxyFor(proxySettingsFrom({ HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' })!, new URL('https://any.where')),
    ).toBeUndefined();
  });

  it('sends the proxy credentials as Basic, decoded', () => {
    expect(proxyAuthorization(new URL('http://corp%40user:p%3Ass@proxy:3128'))).toBe(
      `Basic ${Buffer.from('corp@user:p:ss').toString('base64')}`,
    );
    expect(proxyAuthorization(new URL('http://proxy:3128'))).toBeUndefined();
  });
});
