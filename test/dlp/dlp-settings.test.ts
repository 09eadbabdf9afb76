import { describe, expect, it } from 'vitest';
import { SettingsError, loadSettings } from '../../src/config/settings.ts';

describe('DLP settings', () => {
  it('defaults: enabled, redact, threshold 0.8, every entity, regions left to the recognizer', () => {
    const s = loadSettings({});
    expect(s.DLP_ENABLED).toBe(true);
    expect(s.DLP_ACTION).toBe('redact');
    expect(s.DLP_CONFIDENCE_THRESHOLD).toBe(0.8);
    expect(s.DLP_ENTITIES).toEqual([]);
    expect(s.DLP_PHONE_REGIONS).toEqual([]);
  });

  it('reads the action, threshold, entity list and regions', () => {
    const s = loadSettings({
      DLP_ACTION: 'BLOCK',
      DLP_CONFIDENCE_THRESHOLD: '0.9',
      DLP_ENTITIES: 'EMAIL_ADDRESS, CREDIT_CARD',
      DLP_PHONE_REGIONS: 'us,ch',
      DLP_ENABLED: 'false',
    });
    expect(s).toMatchObject({
      DLP_ACTION: 'block',
      DLP_CONFIDENCE_THRESHOLD: 0.9,
      DLP_ENTITIES: ['EMAIL_ADDRESS', 'CREDIT_CARD'],
      DLP_PHONE_REGIONS: ['us', 'ch'],
      DLP_ENABLED: false,
    });
  });

  it('names the variable and the problem for bad values', () => {
    expect(() => loadSettings({ DLP_ACTION: 'drop' })).toThrow(/DLP_ACTION: expected one of redact, block, log/);
    expect(() => loadSettings({ DLP_CONFIDENCE_THRESHOLD: '1.5' })).toThrow(/DLP_CONFIDENCE_THRESHOLD/);
    expect(() => loadSettings({ DLP_ENTITIES: 'EMAIL_ADDRESS,PASSPORT' })).toThrow(
      /DLP_ENTITIES: unknown entity type\(s\) PASSPORT/,
    );
    expect(() => loadSettings({ DLP_PHONE_REGIONS: 'USA' })).toThrow(SettingsError);
  });
});
