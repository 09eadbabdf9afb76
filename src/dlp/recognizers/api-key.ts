import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Service API keys with a recognisable prefix: GitHub (`ghp_`, `github_pat_`…),
 * Slack (`xoxb-`…), Stripe secret and restricted keys (`sk_live_`, `rk_test_`…),
 * OpenAI and Anthropic keys (`sk-`, `sk-proj-`, `sk-ant-`), and this
 * gateway's own keys (`gw_` + 43 base64url characters). Scored 1.0 when the
 * body mixes letters and digits as generated keys do; `sk-` followed by a
 * long word-like string stays at 0.4.
 *
 * Generic `api_key = …` assignments are deliberately not matched: code sent
 * for review is full of `api_key = os.environ["…"]`.
 */
export function apiKeyRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'api-key',
    entity: 'API_KEY',
    patterns: [
      { name: 'github', regex: /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})(?![\w-])/g, score: 1, requires: ['gh', 'github_pat_'] },
      { name: 'slack', regex: /(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}(?![\w-])/g, score: 1, requires: ['xox'] },
      { name: 'stripe', regex: /(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}(?![\w-])/g, score: 1, requires: ['_live_', '_test_'] },
      { name: 'openai-anthropic', regex: /(?<![\w-])sk-(?:ant-(?:api\d\d-)?|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}(?![\w-])/g, score: 1, requires: ['sk-'] },
      { name: 'gateway', regex: /(?<![\w-])gw_[A-Za-z0-9_-]{43}(?![\w-])/g, score: 1, requires: ['gw_'] },
    ],
    validate(value, pattern) {
      const body = value.replace(/^[a-z]+[_-](?:[a-z]+[_-])?/, '');
      return /\d/.test(body) && /[A-Za-z]/.test(body) ? pattern.score : 0.4;
    },
  });
}
