// Renders the gateway's own OpenAPI document with the vendored Redoc (no CDN, nothing fetched
// but the document). A file of its own so that the page's Content-Security-Policy needs no
// inline script.
Redoc.init("/api/v1/openapi.json", { hideDownloadButton: false, expandResponses: "200,201" },
  document.getElementById("redoc"));
