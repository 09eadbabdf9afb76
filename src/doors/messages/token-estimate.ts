import { isServerTool, type CountTokensBody } from './request-schema.ts';

/**
 * An estimate of the input tokens of a Messages request, for the OpenAI
 * format and wherever the upstream's own count cannot be had (token-count.ts):
 * about four characters of text per token, as
 * Anthropic and OpenAI both state for English text, with fixed costs where
 * text says nothing about size:
 * - an image: {@link IMAGE_TOKENS}, Anthropic's figure for the largest image it
 *   keeps unscaled (about 1.15 megapixels at width x height / 750);
 * - a PDF page: {@link PDF_PAGE_TOKENS} (Anthropic's PDF guide puts a page's
 *   text and page image at 1,500 to 3,000 tokens), pages counted from the
 *   PDF's page objects; a document fetched by URL counts as one page;
 * - a block of a type the gateway does not model, and a server tool: its JSON, as text;
 * - per message and per tool, a few tokens of framing.
 * It is meant for what clients use it for (deciding when a context is full),
 * not for billing; usage in replies is the upstream's exact count.
 */

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;
export const PDF_PAGE_TOKENS = 2_000;
const MESSAGE_OVERHEAD = 4;
const TOOL_OVERHEAD = 8;

type Block = Record<string, unknown>;

/** Pages of a base64 PDF: its `/Type /Page` objects (not `/Pages`); at least one. */
function pdfPages(base64: string): number {
  const text = Buffer.from(base64, 'base64').toString('latin1');
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return Math.max(1, pages);
}

function blockTokens(block: Block): { chars: number; tokens: number } {
  switch (block.type) {
    case 'text':
      return { chars: String(block.text ?? '').length, tokens: 0 };
    case 'image':
      return { chars: 0, tokens: IMAGE_TOKENS };
    case 'document': {
      const source = block.source as Block;
      if (source.type === 'text') return { chars: String(source.data ?? '').length, tokens: 0 };
      return {
        chars: 0,
        tokens: PDF_PAGE_TOKENS * (source.type === 'base64' ? pdfPages(String(source.data ?? '')) : 1),
      };
    }
    case 'tool_use':
      return { chars: String(block.name ?? '').length + JSON.stringify(block.input ?? {}).length, tokens: 0 };
    case 'tool_result': {
      const content = block.content;
      if (typeof content === 'string') return { chars: content.length, tokens: 0 };
      let chars = 0;
      let tokens = 0;
      for (const inner of Array.isArray(content) ? (content as Block[]) : []) {
        const counted = blockTokens(inner);
        chars += counted.chars;
        tokens += counted.tokens;
      }
      return { chars, tokens };
    }
    case 'thinking':
      return { chars: String(block.thinking ?? '').length, tokens: 0 };
    case 'redacted_thinking':
      return { chars: 0, tokens: 0 };
    default:
      // A block of a type the gateway does not model (a search result, a server tool's result): its JSON as text.
      return { chars: JSON.stringify(block).length, tokens: 0 };
  }
}

/** The estimated `input_tokens` of a validated count_tokens body. */
export function estimateInputTokens(body: CountTokensBody): number {
  let chars = 0;
  let tokens = 0;
  const system = body.system;
  if (typeof system === 'string') chars += system.length;
  else for (const block of system ?? []) chars += block.text.length;
  for (const message of body.messages) {
    tokens += MESSAGE_OVERHEAD;
    if (typeof message.content === 'string') {
      chars += message.content.length;
      continue;
    }
    for (const block of message.content) {
      const counted = blockTokens(block as Block);
      chars += counted.chars;
      tokens += counted.tokens;
    }
  }
  for (const tool of body.tools ?? []) {
    tokens += TOOL_OVERHEAD;
    // Anthropic's own tools (web search...) are counted by their JSON, as unmodelled blocks are.
    chars += isServerTool(tool)
      ? JSON.stringify(tool).length
      : tool.name.length + (tool.description?.length ?? 0) + JSON.stringify(tool.input_schema).length;
  }
  return tokens + Math.ceil(chars / CHARS_PER_TOKEN);
}
