// Shared by /docs, /redoc and /dashboard: fetches gateway JSON with the key
// the user typed (kept in sessionStorage for this tab only, sent as
// X-API-Key), and asks for a key when the gateway answers 401. When the
// browser already sends a key (a proxy, or a header set by the test
// harness), no prompt appears.
(function () {
  'use strict';
  var STORAGE = 'llm-gateway-key';

  function get() {
    try {
      return sessionStorage.getItem(STORAGE) || '';
    } catch {
      return '';
    }
  }

  function set(key) {
    try {
      if (key) sessionStorage.setItem(STORAGE, key);
      else sessionStorage.removeItem(STORAGE);
    } catch {
      /* storage disabled: the key lives until the page closes */
    }
  }

  function headers() {
    var key = get();
    return key ? { 'X-API-Key': key } : {};
  }

  function prompt(message) {
    return new Promise(function (resolve) {
      var box = document.getElementById('key-prompt');
      if (!box) {
        box = document.createElement('form');
        box.id = 'key-prompt';
        box.setAttribute(
          'style',
          'font:14px system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:1rem;border:1px solid #ccc;border-radius:6px',
        );
        document.body.insertBefore(box, document.body.firstChild);
      }
      box.innerHTML = '';
      var label = document.createElement('label');
      label.textContent = message;
      label.setAttribute('for', 'key-prompt-input');
      var input = document.createElement('input');
      input.id = 'key-prompt-input';
      input.type = 'password';
      input.autocomplete = 'off';
      input.setAttribute('style', 'display:block;width:100%;margin:.5rem 0;padding:.4rem');
      var button = document.createElement('button');
      button.type = 'submit';
      button.textContent = 'Use key';
      box.appendChild(label);
      box.appendChild(input);
      box.appendChild(button);
      box.onsubmit = function (event) {
        event.preventDefault();
        set(input.value.trim());
        box.remove();
        resolve();
      };
      input.focus();
    });
  }

  /** GET a JSON (or text) resource; prompts for a key on 401 and retries. */
  async function load(url, options) {
    var opts = options || {};
    for (;;) {
      var res = await fetch(url, { headers: headers(), cache: 'no-store' });
      if (res.status === 401 && opts.prompt !== false) {
        await prompt(opts.message || 'This gateway needs an API key (sent as X-API-Key; kept for this tab only).');
        continue;
      }
      if (!res.ok) {
        var err = new Error(url + ' answered ' + res.status);
        err.status = res.status;
        throw err;
      }
      return opts.text ? res.text() : res.json();
    }
  }

  window.GatewayKey = { get: get, set: set, headers: headers, load: load };
})();
