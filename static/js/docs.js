// /docs: Swagger UI, served by the lab itself (its files come from the fastapi-offline
// package), started here rather than by an inline script, which the lab's CSP forbids.
// It loads only on /docs; the lab page merely preloads this small file.

const root = document.getElementById('swagger-ui');
if (root && window.SwaggerUIBundle) {
  window.SwaggerUIBundle({
    url: root.dataset.openapi,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
}
