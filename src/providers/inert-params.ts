import type { ChatRequest } from '../chat/types.ts';

/**
 * Whether a parameter a provider cannot take changes nothing about the
 * answer, so leaving it out is faithful: `user` and `seed` only label or
 * seed the call, a penalty of 0 is the default, `n: 1` is one choice anyway,
 * and `parallel_tool_calls: false` holds when one named function is forced
 * (what LangChain's function-calling structured output sends), and the
 * prompt-cache controls of another format (`cache_control`,
 * `prompt_cache_key`, `prompt_cache_retention`) change what the provider
 * keeps, never what it answers. Such
 * parameters are dropped for every provider rather than refused; a value
 * that would change the answer is still a 400 naming it.
 */
export function isInert(name: keyof ChatRequest, request: ChatRequest): boolean {
  switch (name) {
    case 'user':
    case 'seed':
    case 'cache_control':
    case 'prompt_cache_key':
    case 'prompt_cache_retention':
      return true;
    case 'presence_penalty':
    case 'frequency_penalty':
      return request[name] === 0;
    case 'n':
      return request.n === 1;
    case 'parallel_tool_calls':
      return request.parallel_tool_calls === false && typeof request.tool_choice === 'object';
    // Anthropic's effort tunes cost and latency, not what the answer means; `adaptive` thinking leaves
    // thinking to the model and `disabled` asks for none, both of which a model that cannot reason honours.
    case 'effort':
      return true;
    case 'thinking':
      return request.thinking?.type !== 'enabled';
    // Anthropic's context editing trims what its own server keeps, and a beta header turns on features of
    // its API; a request that uses such a feature in its body is refused for that body. Claude Code sends both always.
    case 'context_management':
    case 'anthropic_beta':
      return true;
    default:
      return false;
  }
}

/**
 * What a Messages request carried for an Anthropic-format upstream alone:
 * context editing, the beta header, and the top-level fields, block and tool
 * fields and block types the gateway does not model. The other formats list these among their unsupported parameters.
 * `anthropic_version` is not: it is the protocol version the door itself
 * answers in.
 */
export function anthropicOnlyParams(request: ChatRequest): Array<keyof ChatRequest> {
  const present: Array<keyof ChatRequest> = [];
  if (request.context_management !== undefined) present.push('context_management');
  if (request.anthropic_beta !== undefined) present.push('anthropic_beta');
  if (request.extra_body !== undefined) present.push('extra_body');
  if (request.anthropic_fields !== undefined) present.push('anthropic_fields');
  return present;
}

/** Unmodelled fields named one by one; the rest are counted. */
const MAX_NAMED_FIELDS = 16;

/** A client's field name as it can stand in a message and in a header: at most 64 characters, others than `[A-Za-z0-9_.$-]` as `?`. */
function fieldName(name: string): string {
  return name.slice(0, 64).replace(/[^A-Za-z0-9_.$-]/g, '?');
}

/**
 * The names a parameter goes by in errors and in `X-Gateway-Dropped-Params`:
 * the fields themselves for `extra_body` and `anthropic_fields` (block and
 * tool field paths, block types; their names are the client's, so
 * made safe for a header and bounded in number), the header's name for the
 * beta header.
 */
export function paramNames(name: keyof ChatRequest, request: ChatRequest): string[] {
  if (name === 'anthropic_beta') return ['anthropic-beta'];
  if (name !== 'extra_body' && name !== 'anthropic_fields') return [name];
  const fields = name === 'extra_body' ? Object.keys(request.extra_body ?? {}) : (request.anthropic_fields ?? []);
  const named = fields.slice(0, MAX_NAMED_FIELDS).map(fieldName);
  return fields.length > MAX_NAMED_FIELDS ? [...named, `${fields.length - MAX_NAMED_FIELDS} more fields`] : named;
}
