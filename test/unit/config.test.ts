import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/gateway-config.ts';
import { loadSettings, SettingsError } from '../../src/config/settings.ts';
import { readFileSync } from 'node:fs';

describe('config.yaml', () => {
  it('loads the shipped file: every spec model is routable, c-haiku included', () => {
    const config = parseConfig(readFileSync('config.yaml', 'utf8'));
    for (const model of [
      'a-4o',
      'a-3.5-turbo',
      'a-4-turbo',
      'a-4',
      'b-2.5-flash',
      'b-2.5-pro',
      'b-1.5-pro',
      'c-sonnet-4-20250514',
      'c-opus-4-20250514',
      'c-haiku-4-20250514',
    ]) {
      expect(config.modelIndex.get(model), model).toBeDefined();
    }
    expect(config.providerIndex.get('provider_b')?.format).toBe('gemini');
    expect(config.providerIndex.get('provider_c')?.format).toBe('anthropic');
    expect(config.providerIndex.get('provider_a')?.timeout_ms).toBe(60_000);
  });

  it('names the bad field', () => {
    expect(() => parseConfig('providers:\n  - name: provider_a\n    models: [x]\n')).toThrowError(
      /providers\.0\.api_key_env/,
    );
    expect(() => parseConfig('providers:\n  - name: provider_a\n    api_key_env: K\n    models: []\n')).toThrowError(
      /providers\.0\.models/,
    );
    expect(() => parseConfig('providers:\n  - name: p\n    api_key_env: K\n    models: [x]\n')).toThrowError(
      /providers\.0\.format/,
    );
    expect(() =>
      parseConfig('providers:\n  - name: provider_a\n    api_key_env: K\n    models: [x]\n    base_url: ftp://x\n'),
    ).toThrowError(/base_url/);
    expect(() => parseConfig('providers: [')).toThrowError(ConfigError);
  });

  it('takes a model served by two providers as two deployments, and rejects a duplicate provider', () => {
    const doc =
      'providers:\n  - {name: provider_a, api_key_env: A, models: [m]}\n  - {name: provider_b, api_key_env: B, models: [m]}\n';
    expect(
      parseConfig(doc)
        .deployments.get('m')
        ?.map((p) => p.name),
    ).toEqual(['provider_a', 'provider_b']);
    const dup =
      'providers:\n  - {name: provider_a, api_key_env: A, models: [m]}\n  - {name: provider_a, api_key_env: B, models: [n]}\n';
    expect(() => parseConfig(dup)).toThrowError(/duplicate provider/);
  });

  it("takes a per-model semantic cache switch only for the provider's own models", () => {
    const doc =
      'providers:\n  - {name: provider_a, api_key_env: A, models: [m, n], semantic_cache_by_model: {n: false}}\n';
    expect(parseConfig(doc).providerIndex.get('provider_a')?.semantic_cache_by_model).toEqual({ n: false });
    const foreign =
      'providers:\n  - {name: provider_a, api_key_env: A, models: [m], semantic_cache_by_model: {x: false}}\n';
    expect(() => parseConfig(foreign)).toThrowError(
      /semantic_cache_by_model: 'x' is not one of this provider's models/,
    );
  });
});

describe('environment settings', () => {
  it('applies the documented defaults', () => {
    const s = loadSettings({});
    expect(s.PORT).toBe(8000);
    expect(s.REDIS_HOST).toBe('localhost');
    expect(s.CACHE_TTL).toBe(3600);
    expect(s.SEMANTIC_CACHE_THRESHOLD).toBe(0.75);
    expect(s.RATE_LIMIT_REQUESTS).toBe(10);
    expect(s.RATE_LIMIT_WINDOW).toBe(60);
    expect(s.DLP_CONFIDENCE_THRESHOLD).toBe(0.8);
    expect(s.DLP_ENABLED).toBe(true);
    expect(s.LOG_FORMAT).toBe('json');
    expect(s.MAX_REQUEST_BYTES).toBe(1024 * 1024);
  });

  it('parses lists and booleans', () => {
    const s = loadSettings({ API_KEYS: ' a, b ,,c', DLP_ENABLED: 'No', DEBUG: 'TRUE' });
    expect(s.API_KEYS).toEqual(['a', 'b', 'c']);
    expect(s.DLP_ENABLED).toBe(false);
    expect(s.DEBUG).toBe(true);
  });

  it('fails with a message naming every bad variable', () => {
    let message = '';
    try {
      loadSettings({ REDIS_PORT: 'abc', SEMANTIC_CACHE_THRESHOLD: '2', LOG_FORMAT: 'xml', DLP_ENABLED: 'maybe' });
    } catch (err) {
      expect(err).toBeInstanceOf(SettingsError);
      message = (err as Error).message;
    }
    expect(message).toContain('REDIS_PORT');
    expect(message).toContain('SEMANTIC_CACHE_THRESHOLD');
    expect(message).toContain('LOG_FORMAT');
    expect(message).toContain('DLP_ENABLED');
  });
});
