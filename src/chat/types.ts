/**
 * The gateway's internal chat types. The API validates and normalizes the
 * client's OpenAI-style body into a {@link ChatRequest}; workers hand it to a
 * provider adapter; adapters return OpenAI-shaped {@link ChatCompletion}s and
 * stream deltas. These types are part of the job contract between the API and
 * the workers.
 */

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  /** Text parts of an array content are joined with "\n". */
  content: string;
  name?: string;
}

/** A validated, normalized chat completion request. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** `max_tokens`, or `max_completion_tokens` when that was sent instead. */
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** Number of choices; default 1. */
  n: number;
  /** Stop sequences; `null`, a string or a list normalize to this. */
  stop?: string[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries usage. */
  include_usage: boolean;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  /** OpenAI's `service_tier`; `flex` marks work tolerant of queuing. */
  service_tier?: string;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletionChoice {
  index: number;
  message: { role: 'assistant'; content: string };
  finish_reason: FinishReason;
  logprobs?: null;
}

/** OpenAI `chat.completion` object. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage: Usage;
}

export interface ChatCompletionChunkChoice {
  index: number;
  delta: { role?: 'assistant'; content?: string };
  finish_reason: FinishReason | null;
  logprobs?: null;
}

/** OpenAI `chat.completion.chunk` object. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  usage?: Usage | null;
}
