// Swagger UI for /docs. The document is fetched by key-prompt.js (so a key
// can be asked for) and handed to Swagger UI as an object; validatorUrl is
// off because its default calls a public validator service.
(async function () {
  'use strict';
  var spec = await window.GatewayKey.load('openapi.json', {
    message: 'Enter a gateway API key to load the API description.',
  });
  var ui = window.SwaggerUIBundle({
    spec: spec,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
  var key = window.GatewayKey.get();
  if (key) ui.preauthorizeApiKey('ApiKeyHeader', key);
  window.ui = ui;
})().catch(function (err) {
  document.getElementById('swagger-ui').textContent = 'Could not load the API description: ' + err.message;
});
