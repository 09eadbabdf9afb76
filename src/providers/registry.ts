import { anthropicAdapter } from './anthropic/adapter.ts';
import { geminiAdapter } from './gemini/adapter.ts';
import { openAiAdapter } from './openai/adapter.ts';
import type { ProviderAdapter, WireFormat } from './types.ts';

/**
 * Which adapter speaks which wire format. Adapters are stateless singletons;
 * per-call state lives in the stream decoders they create.
 */

const ADAPTERS: Readonly<Record<WireFormat, ProviderAdapter>> = {
  openai: openAiAdapter,
  gemini: geminiAdapter,
  anthropic: anthropicAdapter,
};

/** The adapter for a wire format. */
export function adapterFor(format: WireFormat): ProviderAdapter {
  return ADAPTERS[format];
}

/** Type guard for a wire format name read from config. */
export function isWireFormat(value: unknown): value is WireFormat {
  return typeof value === 'string' && Object.hasOwn(ADAPTERS, value);
}

const DEFAULT_FORMATS: Readonly<Record<string, WireFormat>> = {
  provider_a: 'openai',
  provider_b: 'gemini',
  provider_c: 'anthropic',
};

/**
 * The wire format of the three default providers (provider_a, _b, _c), for configs that do not
 * say; undefined for any other name (config must then name the format).
 */
export function defaultFormatFor(providerName: string): WireFormat | undefined {
  return Object.hasOwn(DEFAULT_FORMATS, providerName) ? DEFAULT_FORMATS[providerName] : undefined;
}
