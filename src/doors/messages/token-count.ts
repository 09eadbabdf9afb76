import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest } from '../../chat/types.ts';
import type { GatewayConfig, ProviderConfig } from '../../config/gateway-config.ts';
import { ModelNotFoundError } from '../../errors/catalog.ts';
import { ANTHROPIC_VERSION, buildAnthropicBody } from '../../providers/anthropic/adapter.ts';
import { isInert } from '../../providers/inert-params.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { ProviderEndpoint } from '../../providers/types.ts';
import { normalizeMessagesRequest, withAnthropicHeaders } from './decode.ts';
import { resolveModel } from './messages-door.ts';
import type { CountTokensBody, MessagesRequestBody } from './request-schema.ts';
import { estimateInputTokens } from './token-estimate.ts';

/** Options of {@link TokenCounter}. */
export interface TokenCounterOptions {
  /** The current configuration: models, aliases, providers. */
  config: () => GatewayConfig;
  /** A provider's base URL and key; throws when it cannot be called (no key). */
  endpointOf: (provider: ProviderConfig) => ProviderEndpoint;
  /** DLP over the request before any of its text leaves for the upstream. @defaultValue none: sent as decoded */
  screen?: (request: ChatRequest) => Promise<ChatRequest>;
  /** Milliseconds the upstream has to answer before the estimate does. @defaultValue 10000 */
  timeoutMs?: number;
  /** Told why the upstream's count could not be had, when the estimate answers instead. @defaultValue none */
  onEstimate?: (provider: string, reason: string) => void;
}

/** Where a count came from: the upstream's own endpoint, or the gateway's estimate. */
export type CountSource = 'upstream' | 'estimate';

/**
 * Fields a Messages request has for generation only: Anthropic's counting
 * endpoint refuses them (it takes `model`, `messages`, `system`, `tools`,
 * `tool_choice`, `thinking`, `output_config`, `context_management`, `mcp_servers`...).
 */
const GENERATION_ONLY = ['max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata'];

/**
 * `POST /v1/messages/count_tokens`: the upstream's exact count where its
 * format has a counting endpoint (Anthropic's `/v1/messages/count_tokens`,
 * Gemini's `countTokens`), the request translated and screened by DLP as a
 * Messages request would be; the gateway's estimate (token-estimate.ts) for
 * the OpenAI format, which has none, and whenever the upstream's count
 * cannot be had (no key, a refusal, a failure, a timeout), so a client
 * deciding whether its context is full always gets an answer.
 */
export class TokenCounter {
  private readonly options: TokenCounterOptions;

  constructor(options: TokenCounterOptions) {
    this.options = options;
  }

  /** The count of a validated body; throws the client's error for an unknown model. */
  async count(body: CountTokensBody, headers: IncomingHttpHeaders): Promise<{ tokens: number; source: CountSource }> {
    const config = this.options.config();
    const model = resolveModel(config, body.model);
    const provider = config.modelIndex.get(model);
    if (!provider) throw new ModelNotFoundError(body.model);
    const estimate = { tokens: estimateInputTokens(body), source: 'estimate' as const };
    if (provider.format === 'openai') return estimate;
    try {
      const tokens = await this.upstreamCount(body, headers, model, provider);
      return { tokens, source: 'upstream' };
    } catch (err) {
      this.options.onEstimate?.(provider.name, err instanceof Error ? err.message : String(err));
      return estimate;
    }
  }

  private async upstreamCount(
    body: CountTokensBody,
    headers: IncomingHttpHeaders,
    model: string,
    provider: ProviderConfig,
  ): Promise<number> {
    const endpoint = this.options.endpointOf(provider);
    // Counting reads no output budget; one token keeps the request a valid Messages request.
    const decoded = withAnthropicHeaders(
      normalizeMessagesRequest({ ...body, max_tokens: 1 } as MessagesRequestBody, model),
      headers,
    );
    const adapter = adapterFor(provider.format);
    // What changes nothing a reply means is left out, as for a generation; anything else leaves it to the estimate.
    for (const name of adapter.unsupportedParams(decoded)) {
      if (!isInert(name, decoded))
        throw new Error(`the request carries '${name}', which ${provider.name} does not read`);
      delete decoded[name];
    }
    const problem = adapter.validate(decoded);
    if (problem !== undefined) throw new Error(problem);
    const screened = this.options.screen ? await this.options.screen(decoded) : decoded;
    const request = { ...screened, model: provider.upstream_models?.[model] ?? model };
    const call =
      provider.format === 'anthropic' ? anthropicCount(request, endpoint) : geminiCount(request, endpoint, adapter);
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const res = await fetch(call.url, {
      method: 'POST',
      headers: call.headers,
      body: JSON.stringify(call.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!res.ok) throw new Error(`${provider.name} answered ${res.status}`);
    const tokens = json?.[call.field];
    if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 0)
      throw new Error(`${provider.name} answered without '${call.field}'`);
    return tokens;
  }
}

interface CountCall {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The field of the reply that holds the count. */
  field: string;
}

function anthropicCount(request: ChatRequest, endpoint: ProviderEndpoint): CountCall {
  const body = buildAnthropicBody(request, false);
  for (const field of GENERATION_ONLY) delete body[field];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-api-key': endpoint.apiKey,
    'anthropic-version': request.anthropic_version ?? ANTHROPIC_VERSION,
  };
  if (request.anthropic_beta !== undefined) headers['anthropic-beta'] = request.anthropic_beta;
  return { url: `${endpoint.baseUrl}/v1/messages/count_tokens`, headers, body, field: 'input_tokens' };
}

/** Gemini counts a whole `generateContent` request: the one the adapter would send. */
function geminiCount(
  request: ChatRequest,
  endpoint: ProviderEndpoint,
  adapter: ReturnType<typeof adapterFor>,
): CountCall {
  const generate = adapter.buildRequest(request, endpoint, { stream: false });
  const model = encodeURIComponent(request.model);
  return {
    url: `${endpoint.baseUrl}/models/${model}:countTokens`,
    headers: generate.headers,
    body: { generateContentRequest: { model: `models/${request.model}`, ...JSON.parse(generate.body) } },
    field: 'totalTokens',
  };
}
