import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Service API keys with a recognisable prefix: GitHub (`ghp_`, `github_pat_`…),
 * GitLab (`glpat-`…), npm (`npm_`), Hugging Face (`hf_`), SendGrid
 * (`SG.x.y`), Slack tokens (`xoxb-`…) and incoming-webhook URLs, Stripe secret,
 * restricted and webhook-signing keys (`sk_live_`, `rk_test_`, `whsec_`…),
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
      {
        name: 'github',
        regex: /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})(?![\w-])/g,
        score: 1,
        requires: ['gh', 'github_pat_'],
      },
      { name: 'slack', regex: /(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}(?![\w-])/g, score: 1, requires: ['xox'] },
      {
        name: 'stripe',
        regex: /(?<![\w-])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/]{24,})(?![\w-])/g,
        score: 1,
        requires: ['_live_', '_test_', 'whsec_'],
      },
      {
        name: 'gitlab',
        regex: /(?<![\w-])gl(?:pat|dt|rt|ptt|oas|cbt|imt|agent|ft|soat)-[A-Za-z0-9_-]{20,}(?![\w-])/g,
        score: 1,
        requires: ['gl'],
      },
      { name: 'npm', regex: /(?<![\w-])npm_[A-Za-z0-9]{36}(?![\w-])/g, score: 1, requires: ['npm_'] },
      { name: 'hugging-face', regex: /(?<![\w-])hf_[A-Za-z0-9]{30,40}(?![\w-])/g, score: 1, requires: ['hf_'] },
      {
        name: 'sendgrid',
        regex: /(?<![\w-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])/g,
        score: 1,
        requires: ['SG.'],
      },
      {
        name: 'slack-webhook',
        regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/]{20,}/g,
        score: 1,
        requires: ['hooks.slack.com'],
      },
      {
        name: 'openai-anthropic',
        regex: /(?<![\w-])sk-(?:ant-(?:api\d\d-)?|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}(?![\w-])/g,
        score: 1,
        requires: ['sk-'],
      },
      { name: 'gateway', regex: /(?<![\w-])gw_[A-Za-z0-9_-]{43}(?![\w-])/g, score: 1, requires: ['gw_'] },
    ],
    validate(value, pattern) {
      const body = value.replace(/^(?:https:\/\/hooks\.slack\.com\/\w+\/|[A-Za-z]+[_.-](?:[a-z]+[_-])?)/, '');
      return /\d/.test(body) && /[A-Za-z]/.test(body) ? pattern.score : 0.4;
    },
  });
}
