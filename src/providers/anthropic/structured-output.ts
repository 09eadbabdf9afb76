import type { ChatRequest, JsonSchema } from '../../chat/types.ts';

/**
 * `response_format` for the Anthropic Messages API (provider_c).
 *
 * Decision, and where it is documented:
 *
 * - `json_schema` with a schema -> Anthropic's native JSON outputs,
 *   `output_config: {format: {type: 'json_schema', schema}}`. Anthropic's
 *   "Structured outputs" guide (platform.claude.com/docs/en/build-with-claude/structured-outputs)
 *   documents it as generally available with no beta header; the beta form
 *   (`output_format` with `anthropic-beta: structured-outputs-2025-11-13`, late
 *   2025) has moved there and is deprecated. The field shapes are the API's
 *   `OutputConfig` / `JSONOutputFormat` as generated into Anthropic's
 *   TypeScript SDK (`src/resources/messages/messages.ts`). The answer comes
 *   back as ordinary text blocks holding the JSON, so replies need nothing
 *   special. The guide says JSON outputs and tool use work together in one
 *   request, so the client's tools are kept. Limits the client may meet, as
 *   Anthropic's 400 passed through: only the models the guide lists (the 4.5
 *   generation on) take it, and only a subset of JSON Schema (objects with
 *   `additionalProperties: false`, no numeric or length constraints, no
 *   recursion). The schema is sent as the client wrote it: Anthropic's SDKs
 *   rewrite schemas client-side, but a gateway that silently changed a
 *   contract would answer with JSON the client did not ask for. The
 *   json_schema `name`, `description` and `strict` have no counterpart (the
 *   format is always enforced) and are not sent.
 *
 * - `json_object` (and `json_schema` without a schema) -> a forced tool. The
 *   API has no schema-less JSON mode, and the native format cannot stand in
 *   for one (every object in its schemas must be closed, so `{type: 'object'}`
 *   would only admit `{}`). So the request declares one tool,
 *   {@link JSON_MODE_TOOL}, whose `input_schema` is a permissive
 *   `{type: 'object'}`, and forces it with `tool_choice: {type: 'tool', name,
 *   disable_parallel_tool_use: true}` (`ToolChoiceTool`: "the model will
 *   output exactly one tool use"). A forced tool choice makes the model answer
 *   with the call and no text (Anthropic's tool-use guide on forcing tool use;
 *   AWS Bedrock's `ToolChoice` reference says the same of `any`/`tool`: "no
 *   text is generated"); should a text block come anyway, it is kept, in
 *   block order. The reply's `tool_use` input becomes the message content
 *   (JSON text) with finish reason `stop`; the client never sees the call,
 *   streamed or not (its `input_json_delta` fragments become content deltas).
 *   The forced tool excludes the client's own tools, so `json_object` with
 *   `tools` is refused by `validate()`. The name is reserved: replies are
 *   recognised by it (neither `parseResponse` nor the stream decoder sees the
 *   request), so a client tool of that name is refused too.
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
