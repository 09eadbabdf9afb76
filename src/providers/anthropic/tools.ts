import type { ChatRequest, FunctionTool, JsonSchema } from '../../chat/types.ts';

/**
 * OpenAI function tools and `tool_choice` as Anthropic Messages API client
 * tools. Field names follow the API's `Tool` and `ToolChoice*` types as
 * generated into Anthropic's TypeScript SDK (`src/resources/messages/messages.ts`):
 * a tool is `{name, description, input_schema}`, with `input_schema` a JSON
 * schema whose `type` must be `object`; `tool_choice` is `{type: 'auto' | 'any'
 * | 'tool' (with name) | 'none'}`, and the first three take
 * `disable_parallel_tool_use` ("at most one tool use" / "exactly one").
 *
 * `function.strict` is not sent (a Messages client's own `strict` is, with
 * its tool's other Anthropic fields): Anthropic's strict tool use exists only on
 * some models, and Anthropic's own OpenAI-compatible endpoint ignores `strict`
 * too (its "OpenAI SDK compatibility" page), so requests written for OpenAI
 * keep working on every Claude model.
 */

/** The input schema of a function without parameters, which OpenAI allows to omit them. */
const NO_PARAMETERS: JsonSchema = { type: 'object', properties: {} };

/** The schema sent as `input_schema`, or a message when it cannot be one. */
function inputSchemaOf(tool: FunctionTool): JsonSchema | string {
  const parameters = tool.function.parameters;
  if (parameters === undefined || Object.keys(parameters).length === 0) return NO_PARAMETERS;
  // OpenAI infers the object type of a parameters schema that leaves it out; Anthropic requires it.
  if (parameters.type === undefined) return { type: 'object', ...parameters };
  if (parameters.type !== 'object') {
    return `the parameters of function '${tool.function.name}' must be a JSON schema of type 'object' for provider_c.`;
  }
  return parameters;
}

/** A `validate()` message when a tool cannot be declared upstream. */
export function toolsProblem(req: ChatRequest): string | undefined {
  for (const tool of req.tools ?? []) {
    const schema = inputSchemaOf(tool);
    if (typeof schema === 'string') return schema;
  }
  return undefined;
}

/**
 * `tools` and `tool_choice` of the body; empty when the request declares no
 * tools. A Messages client's server tools go whole, back in their places.
 */
export function toolFields(req: ChatRequest): Record<string, unknown> {
  const server = req.anthropic_server_tools ?? [];
  if ((req.tools === undefined || req.tools.length === 0) && server.length === 0) return {};
  const tools: Array<Record<string, unknown>> = (req.tools ?? []).map((tool) => {
    const schema = inputSchemaOf(tool);
    if (typeof schema === 'string') throw new Error(schema);
    const out: Record<string, unknown> = { name: tool.function.name };
    if (tool.function.description !== undefined) out.description = tool.function.description;
    out.input_schema = schema;
    // A Messages client's own tool fields (cache mark, strict, loading hints) go as it sent them.
    if (tool.anthropic !== undefined) Object.assign(out, tool.anthropic);
    return out;
  });
  for (const { at, tool } of server) tools.splice(at, 0, tool);
  const fields: Record<string, unknown> = { tools };
  const choice = toolChoiceOf(req);
  if (choice !== undefined) fields.tool_choice = choice;
  return fields;
}

function toolChoiceOf(req: ChatRequest): Record<string, unknown> | undefined {
  const choice = req.tool_choice;
  // `none` takes no disable_parallel_tool_use: no call, nothing to serialize.
  if (choice === 'none') return { type: 'none' };
  let out: Record<string, unknown> | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice !== undefined) out = { type: 'tool', name: choice.function.name };
  if (req.parallel_tool_calls === false) {
    // Auto is the API's default when no tool_choice is sent, so it carries the flag then.
    out ??= { type: 'auto' };
    out.disable_parallel_tool_use = true;
  }
  return out;
}
