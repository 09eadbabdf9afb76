import { ProviderError, ProviderTimeoutError } from '../../errors/catalog.ts';
import type { ProviderEndpoint } from '../../providers/types.ts';
import type { ResponseStore } from './response-store.ts';

/** What a client asks of a response a native upstream keeps. */
export type NativeAction = 'retrieve' | 'delete' | 'input_items';

/** Options of {@link NativeResources}. */
export interface NativeResourcesOptions {
  store: ResponseStore;
  /** The endpoint of a provider by name (its key required); throws when it cannot be called. */
  endpointOf: (provider: string) => ProviderEndpoint;
  /** DLP on a retrieved response (DLP_SCAN_REPLIES), as on the reply that made it. @defaultValue none: as the upstream wrote it */
  screen?: (responseJson: string) => Promise<string>;
  /** Milliseconds the upstream has to answer. @defaultValue 30000 */
  timeoutMs?: number;
}

const PATHS: Record<NativeAction, { method: string; suffix: string }> = {
  retrieve: { method: 'GET', suffix: '' },
  delete: { method: 'DELETE', suffix: '' },
  input_items: { method: 'GET', suffix: '/input_items' },
};

/**
 * `GET`, `DELETE` and `input_items` of a response a native Responses
 * upstream keeps (`responses_api: native`): answered by that provider's
 * `/responses/{id}` for the key owner that made it (recorded in the
 * {@link ResponseStore}), and by nobody for any other owner, whose request
 * then goes on to the gateway's own stored responses (a 404 there).
 */
export class NativeResources {
  private readonly options: NativeResourcesOptions;

  constructor(options: NativeResourcesOptions) {
    this.options = options;
  }

  /**
   * The upstream's status and JSON body for the owner's native response
   * `id`; undefined when `id` is not one of the owner's native responses.
   * `query` is the client's query string (`input_items` pagination), passed on.
   */
  async call(
    id: string,
    owner: string,
    action: NativeAction,
    query = '',
  ): Promise<{ status: number; body: unknown } | undefined> {
    const record = await this.options.store.native(id, owner);
    if (!record) return undefined;
    const endpoint = this.options.endpointOf(record.provider);
    const { method, suffix } = PATHS[action];
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    let res: Response;
    try {
      res = await fetch(`${endpoint.baseUrl}/responses/${encodeURIComponent(id)}${suffix}${query}`, {
        method,
        headers: { authorization: `Bearer ${endpoint.apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      if (err instanceof Error && err.name === 'TimeoutError')
        throw new ProviderTimeoutError(`${record.provider} did not answer within ${timeoutMs} ms.`);
      throw new ProviderError(`${record.provider} could not be reached.`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ProviderError(`${record.provider} answered ${res.status} without a JSON body.`);
    }
    if (!res.ok) return { status: res.status, body };
    if (action === 'delete') await this.options.store.forgetNative(id, owner);
    if (action === 'retrieve' && typeof body === 'object' && body !== null) {
      (body as Record<string, unknown>).model = record.model;
      if (this.options.screen) body = JSON.parse(await this.options.screen(JSON.stringify(body)));
    }
    return { status: res.status, body };
  }
}
