import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/errors/catalog.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ProviderKeys } from '../../src/providers/provider-keys.ts';

/** The one place provider keys are read: from the variable config.yaml names, at the moment of use. */

const east = { name: 'east', api_key_env: 'EAST_KEY' };
const west = { name: 'west', api_key_env: 'WEST_KEY' };
const north = { name: 'north', api_key_env: 'NORTH_KEY' };

describe('ProviderKeys', () => {
  it("reads each provider's key from the variable it names; an unset or empty variable is no key", () => {
    const keys = new ProviderKeys({ EAST_KEY: 'sk-east-1', WEST_KEY: '' });
    expect(keys.keyOf(east)).toBe('sk-east-1');
    expect(keys.keyOf(west)).toBeUndefined();
    expect(keys.keyOf(north)).toBeUndefined();
    expect([keys.has(east), keys.has(west), keys.has(north)]).toEqual([true, false, false]);
  });

  it('reads the environment at the moment of use, so a reload that sets a variable takes effect', () => {
    const env: NodeJS.ProcessEnv = {};
    const keys = new ProviderKeys(env);
    expect(keys.has(east)).toBe(false);
    env.EAST_KEY = 'sk-east-2';
    expect(keys.require(east)).toBe('sk-east-2');
  });

  it("turns a missing key into the client's provider_error naming the variable, never a key", () => {
    const keys = new ProviderKeys({ EAST_KEY: 'sk-east-3' });
    const error = (() => {
      try {
        keys.require(west);
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('provider_error');
    expect((error as Error).message).toBe('west is unavailable: its API key (WEST_KEY) is not configured.');
  });

  it('lists the keys that are set, for the scrubber', () => {
    expect(new ProviderKeys({ EAST_KEY: 'sk-east-4', NORTH_KEY: 'sk-north-4' }).keysOf([east, west, north])).toEqual([
      'sk-east-4',
      'sk-north-4',
    ]);
  });

  it('warns once per provider without a key, naming its variable and not the keys that are set', () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json', DEBUG: false }, 'keys-test', {
      env: {},
      destination: destination as never,
    });
    new ProviderKeys({ EAST_KEY: 'sk-east-5' }).warnUnset([east, west, north], logger, 'jobs');
    const lines = chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line.provider, line.env, line.msg])).toEqual([
      ['west', 'WEST_KEY', 'provider key not set: its jobs will answer provider_error'],
      ['north', 'NORTH_KEY', 'provider key not set: its jobs will answer provider_error'],
    ]);
    expect(chunks.join('')).not.toContain('sk-east-5');
  });
});
