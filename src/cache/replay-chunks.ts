import type { ChatCompletion, ChatCompletionChunk } from '../chat/types.ts';

/**
 * The `chat.completion.chunk` JSON strings that replay a stored completion as
 * a stream: per choice a role chunk, one content chunk and a finish chunk,
 * then a usage chunk when the client asked for `include_usage` (with
 * `usage: null` on the others, as OpenAI sends them). The text is sent whole:
 * it is already there, splitting it would only add bytes.
 */
export function replayChunks(completion: ChatCompletion, includeUsage: boolean): string[] {
  const base = { id: completion.id, object: 'chat.completion.chunk' as const, created: completion.created, model: completion.model };
  const chunk = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletionChunk['usage']): string => {
    const out: ChatCompletionChunk = { ...base, choices };
    if (includeUsage) out.usage = usage ?? null;
    return JSON.stringify(out);
  };
  const chunks: string[] = [];
  for (const choice of completion.choices) {
    chunks.push(chunk([{ index: choice.index, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }]));
    if (choice.message.content.length > 0) {
      chunks.push(chunk([{ index: choice.index, delta: { content: choice.message.content }, finish_reason: null, logprobs: null }]));
    }
    chunks.push(chunk([{ index: choice.index, delta: {}, finish_reason: choice.finish_reason, logprobs: null }]));
  }
  if (includeUsage) chunks.push(chunk([], completion.usage));
  return chunks;
}
