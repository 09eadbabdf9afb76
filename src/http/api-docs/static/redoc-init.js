// ReDoc for /redoc, from redoc's standalone bundle; the document is fetched
// by key-prompt.js and passed as an object.
(async function () {
  'use strict';
  var spec = await window.GatewayKey.load('openapi.json', {
    message: 'Enter a gateway API key to load the API description.',
  });
  window.Redoc.init(
    spec,
    { expandResponses: '200', hideDownloadButton: false, disableSearch: false },
    document.getElementById('redoc'),
  );
})().catch(function (err) {
  document.getElementById('redoc').textContent = 'Could not load the API description: ' + err.message;
});
