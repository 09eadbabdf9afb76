import { describe, expect, it } from 'vitest';
import { mapRequestTexts, requestTexts } from '../../src/chat/message-texts.ts';
import { parseConfig } from '../../src/config/gateway-config.ts';
import { messagesDoor } from '../../src/doors/messages/messages-door.ts';
import { countTokensRequestSchema } from '../../src/doors/messages/request-schema.ts';
import {
  CHARS_PER_TOKEN,
  estimateInputTokens,
  IMAGE_TOKENS,
  PDF_PAGE_TOKENS,
} from '../../src/doors/messages/token-estimate.ts';

const config = parseConfig('providers: [{name: provider_c, api_key_env: K, models: [c-1]}]');
const door = messagesDoor({ config: () => config });

function estimate(body: unknown): number {
  return estimateInputTokens(countTokensRequestSchema.parse(body));
}

/** A PDF with `pages` page objects, base64. */
function pdf(pages: number): string {
  const objects = Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`).join(
    '\n',
  );
  return Buffer.from(
    `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count ${pages} >> endobj\n${objects}\n%%EOF`,
    'latin1',
  ).toString('base64');
}

describe('count_tokens estimate', () => {
  it('counts text at four characters a token, with framing per message and tool', () => {
    const text = 'x'.repeat(400);
    const one = estimate({ model: 'c-1', messages: [{ role: 'user', content: text }] });
    expect(one).toBe(400 / CHARS_PER_TOKEN + 4);
    const withSystem = estimate({ model: 'c-1', system: 'y'.repeat(40), messages: [{ role: 'user', content: text }] });
    expect(withSystem - one).toBe(10);
    const withTool = estimate({
      model: 'c-1',
      messages: [{ role: 'user', content: text }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
    expect(withTool).toBeGreaterThan(one + 8);
  });

  it('charges images a fixed cost and PDFs per page counted in the file', () => {
    const base = estimate({ model: 'c-1', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }] }] });
    const image = estimate({
      model: 'c-1',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
            { type: 'text', text: 'look' },
          ],
        },
      ],
    });
    expect(image - base).toBe(IMAGE_TOKENS);
    const threePages = estimate({
      model: 'c-1',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf(3) } },
            { type: 'text', text: 'look' },
          ],
        },
      ],
    });
    expect(threePages - base).toBe(3 * PDF_PAGE_TOKENS);
  });

  it('counts tool inputs and results', () => {
    const body = {
      model: 'c-1',
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't', name: 'search', input: { query: 'z'.repeat(100) } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r'.repeat(200) }] },
      ],
    };
    expect(estimate(body)).toBeGreaterThan((100 + 200) / CHARS_PER_TOKEN);
  });
});

describe('the Messages door and DLP', () => {
  it('gives DLP every text: blocks, text documents, tool results; and redaction keeps cache_control', () => {
    const req = door.decode({
      body: {
        model: 'c-1',
        max_tokens: 10,
        system: [{ type: 'text', text: 'sys text', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: 'call args' } }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't', content: 'result text', is_error: true },
              { type: 'text', text: 'marked text', cache_control: { type: 'ephemeral' } },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'document text' } },
            ],
          },
        ],
      },
      headers: {},
      owner: 'o',
    });
    const texts = requestTexts(req);
    for (const expected of ['sys text', 'first', '{"a":"call args"}', 'result text', 'marked text', 'document text'])
      expect(texts).toContain(expected);
    const redacted = mapRequestTexts(req, (t) => t.toUpperCase());
    expect(redacted.messages[0]).toEqual({ role: 'system', content: 'SYS TEXT', cache_control: { type: 'ephemeral' } });
    expect(redacted.messages.at(-1)).toMatchObject({
      content: [
        { type: 'text', text: 'MARKED TEXT', cache_control: { type: 'ephemeral' } },
        { type: 'document', source: { type: 'text', data: 'DOCUMENT TEXT' } },
      ],
    });
    expect(redacted.messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'RESULT TEXT', is_error: true });
  });

  it('gives DLP every string of the fields passed unmodelled to an Anthropic upstream, keys left alone', () => {
    const req = door.decode({
      body: {
        model: 'c-1',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        container: 'ctr one',
        mcp_servers: [{ name: 'srv', n: 3, on: true }],
      },
      headers: {},
      owner: 'o',
    });
    expect(requestTexts(req)).toEqual(expect.arrayContaining(['ctr one', 'srv']));
    expect(mapRequestTexts(req, (t) => t.toUpperCase()).extra_body).toEqual({
      container: 'CTR ONE',
      mcp_servers: [{ name: 'SRV', n: 3, on: true }],
    });
  });
});
