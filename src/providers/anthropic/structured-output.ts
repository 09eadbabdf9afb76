import type { ChatRequest, JsonSchema } from '../../chat/types.ts';

/**
 * `response_format` for the Anthropic Messages API: a schema goes to the
 * native JSON outputs, JSON mode to one forced tool whose input is the answer
 * (docs/decisions/anthropic-structured-output.md says why).
 */

/** Name of the tool that carries a JSON-mode answer. Reserved: clients cannot declare a tool of this name. */
export const JSON_MODE_TOOL = 'gateway_json_response';

const JSON_MODE_TOOL_DESCRIPTION = 'Give your complete answer as a JSON object: the input of this tool is the answer.';

/** How a request's `response_format` is expressed, or undefined for plain text. */
export type StructuredOutput = { kind: 'native'; schema: JsonSchema } | { kind: 'json_mode_tool' };

export function structuredOutputOf(req: ChatRequest): StructuredOutput | undefined {
  const format = req.response_format;
  if (format === undefined) return undefined;
  if (format.type === 'json_schema' && format.json_schema.schema !== undefined) {
    return { kind: 'native', schema: format.json_schema.schema };
  }
  return { kind: 'json_mode_tool' };
}

/** The body fields for the structured output; the JSON-mode tool replaces `tools` and `tool_choice`. */
export function structuredOutputFields(output: StructuredOutput): Record<string, unknown> {
  if (output.kind === 'native') return { output_config: { format: { type: 'json_schema', schema: output.schema } } };
  return {
    tools: [{ name: JSON_MODE_TOOL, description: JSON_MODE_TOOL_DESCRIPTION, input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: JSON_MODE_TOOL, disable_parallel_tool_use: true },
  };
}

/** A `validate()` message when the structured output cannot be combined with the rest of the request. */
export function structuredOutputProblem(req: ChatRequest): string | undefined {
  if (req.tools?.some((tool) => tool.function.name === JSON_MODE_TOOL)) {
    return `the tool name '${JSON_MODE_TOOL}' is reserved by the gateway for JSON mode on provider_c; rename the tool.`;
  }
  const output = structuredOutputOf(req);
  if (output?.kind === 'json_mode_tool' && req.tools !== undefined) {
    return (
      "'response_format' json_object (or json_schema without a schema) cannot be combined with 'tools' for provider_c: " +
      'the gateway expresses JSON mode as a forced tool call there. Send a json_schema with a schema, or drop the tools.'
    );
  }
  return undefined;
}
